'use strict';

/**
 * Prints rows as an aligned text table on stdout (for humans; --json is for scripts).
 * @param {object[]} rows
 * @param {string[]} cols
 */
function printTable(rows, cols) {
  const cell = (v) =>
    String(v ?? '')
      .replace(/[\r\n\t]+/g, ' ')
      .slice(0, 60);
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals) =>
    vals
      .map((v, i) => cell(v).padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  process.stdout.write(line(cols) + '\n');
  for (const r of rows) process.stdout.write(line(cols.map((c) => r[c])) + '\n');
  if (!rows.length) process.stdout.write('(none)\n');
}

/**
 * The cells of a header row in a table (ls, search).
 * @param {{uid: number, date: string|null, from: {name: string, address: string}|null,
 *   subject: string|null, size: number, flags: string[]}} r
 */
function headerCells(r) {
  return {
    uid: r.uid,
    date: r.date ? r.date.slice(0, 16).replace('T', ' ') : '',
    from: r.from ? r.from.address || r.from.name : '',
    subject: r.subject || '',
    size: r.size,
    flags: (r.flags || []).join(' '),
  };
}

module.exports = { printTable, headerCells };
