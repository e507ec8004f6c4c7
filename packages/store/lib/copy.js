'use strict';

const { from: copyFrom } = require('pg-copy-streams');
const { pipeline } = require('node:stream/promises');
const { Readable } = require('node:stream');

/*
 * COPY … FROM STDIN in text format: several times faster than multi-row INSERT for import
 * batches (one round trip, no bind-parameter parsing). Text-format escaping per the
 * PostgreSQL COPY docs: backslash, newline, carriage return and tab are escaped; NULL is \N.
 */

const NULL = '\\N';

function escText(s) {
  return s.replace(/[\\\n\r\t]/g, (c) =>
    c === '\\' ? '\\\\' : c === '\n' ? '\\n' : c === '\r' ? '\\r' : '\\t',
  );
}

// Array literal element quoting (arrays are then COPY-escaped as a whole).
function arrayLiteral(arr) {
  return '{' + arr.map((v) => '"' + String(v).replace(/["\\]/g, '\\$&') + '"').join(',') + '}';
}

/**
 * @param {unknown} v
 * @returns {string} one COPY text field
 */
function field(v) {
  if (v === null || v === undefined) return NULL;
  if (Buffer.isBuffer(v)) return '\\\\x' + v.toString('hex');
  if (Array.isArray(v)) return escText(arrayLiteral(v));
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'boolean') return v ? 't' : 'f';
  if (typeof v === 'number') return String(v);
  return escText(String(v));
}

/**
 * COPYs rows into table through a pg client (inside the caller's transaction).
 * @param {import('pg').Client} client
 * @param {string} table trusted identifier
 * @param {string[]} columns trusted identifiers
 * @param {object[]} rows
 */
async function copyRows(client, table, columns, rows) {
  if (!rows.length) return;
  const stream = client.query(copyFrom(`COPY ${table} (${columns.join(', ')}) FROM STDIN`));
  function* lines() {
    let chunk = '';
    for (const r of rows) {
      chunk += columns.map((c) => field(r[c])).join('\t') + '\n';
      if (chunk.length > 1 << 20) {
        yield chunk;
        chunk = '';
      }
    }
    if (chunk) yield chunk;
  }
  await pipeline(Readable.from(lines()), stream);
}

module.exports = { copyRows, field };
