'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { FLAT_FILE } = require('./backends');
const { checkTargets, targetsMarkdown } = require('./targets');

/** The 2003 study's own tables (committed data: ../data/lisa2003.json, from notes/lisa2003.md). */
const LISA2003 = require('../data/lisa2003.json');

const SIZE_ORDER = ['small', 'medium', 'large'];
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#17becf'];

const esc = (s) =>
  String(s).replace(
    /[&<>"]/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c],
  );
const fmt = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2));

/**
 * Groups result rows: request → phase → backend → size → row.
 * @param {object[]} results
 */
/** A result's door; results written before doors existed are store or api by backend name. */
function doorOf(r) {
  return (
    r.door ||
    (r.backend.endsWith('-api') ? 'api' : r.backend.startsWith('dovecot') ? 'imap' : 'store')
  );
}

function group(results) {
  const g = new Map();
  for (const r of results) {
    const key = `${r.request}\u0000${r.phase}`;
    if (!g.has(key)) g.set(key, { request: r.request, phase: r.phase, rows: new Map() });
    const byBackend = g.get(key).rows;
    if (!byBackend.has(r.backend)) byBackend.set(r.backend, new Map());
    byBackend.get(r.backend).set(r.size, r);
  }
  return [...g.values()];
}

const sizesOf = (results) => SIZE_ORDER.filter((s) => results.some((r) => r.size === s));

/**
 * results.md: one table per request and phase; rows backends, columns sizes (median ms with
 * min–max and matches), then each backend's ratio to the best flat-file backend of that size
 * (>1 = slower than it). A row that failed the agreement check is marked and its ratio
 * withheld: a wrong answer is not a fast one.
 * @param {{machine: object, results: object[]}} data
 * @param {{queries?: object, notes?: string[], command?: string}} [extra]
 * @returns {string}
 */
function markdown(data, extra = {}) {
  const sizes = sizesOf(data.results);
  const lines = ['# mailgate bench', ''];
  if (extra.command) lines.push('```', extra.command, '```', '');
  lines.push(
    'Machine: ' +
      Object.entries(data.machine)
        .filter(([, v]) => v != null && typeof v !== 'object')
        .map(([k, v]) => `${k} ${v}`)
        .join('; '),
    '',
  );
  if (extra.queries) {
    lines.push(
      '## Queries (chosen by counting)',
      '',
      '| size | request | query | messages | fraction |',
      '|---|---|---|---:|---:|',
    );
    for (const [size, qs] of Object.entries(extra.queries)) {
      for (const q of qs) {
        lines.push(
          `| ${size} | ${q.request} | \`${q.query}\` | ${q.count} | ${(100 * q.fraction).toFixed(2)}% |`,
        );
      }
    }
    lines.push('');
  }
  for (const n of extra.notes || []) lines.push(`- note: ${n}`);
  if ((extra.notes || []).length) lines.push('');
  if (
    sizes.includes('large') &&
    data.results.some((r) => r.backend === 'pg' || r.backend === 'mailgate-imap')
  ) {
    lines.push(
      '## Targets (large mailbox; issue 6: the PostgreSQL path, issue 13: every door)',
      '',
      targetsMarkdown(checkTargets(data.results)),
      '',
    );
  }
  lines.push(
    'Times in ms: median (min–max) · matches. ✗ = answer differs from the other backends.',
    'Doors: store (in-process storage interface), imap (the wire, one raw client for every server),',
    'api (HTTP). Ratios are to the best flat-file backend of the same door; ‡ marks a ratio across',
    'doors (to the best flat-file backend of any door).',
    '',
  );
  lines.push(...studyMarkdown(data.results), '');
  if (Array.isArray(data.machine.wall) && data.machine.wall.length) {
    lines.push(...wallMarkdown(data.machine.wall, data.machine.benchSeconds), '');
  }
  for (const grp of group(data.results)) {
    lines.push(`## ${grp.request} (${grp.phase})`, '');
    const head = [
      'backend',
      'door',
      ...sizes.map((s) => `${s}`),
      ...sizes.map((s) => `÷ best flat file (${s})`),
    ];
    lines.push(
      `| ${head.join(' | ')} |`,
      `|${head.map((_, i) => (i > 1 ? '---:' : '---')).join('|')}|`,
    );
    // The best flat-file time per size within each door, and over all doors: a ratio compares
    // within a door when that door has a flat-file side (store: mbox/maildir; imap: Dovecot),
    // and is marked ‡ when it crosses doors (the api door has no flat-file side).
    const best = {};
    for (const s of sizes) {
      best[s] = new Map();
      for (const [backend, bySize] of grp.rows) {
        const r = bySize.get(s);
        if (!r || !r.agrees || !FLAT_FILE.includes(backend)) continue;
        for (const key of [doorOf(r), '*']) {
          if (!best[s].has(key) || r.ms.median < best[s].get(key)) best[s].set(key, r.ms.median);
        }
      }
    }
    for (const [backend, bySize] of grp.rows) {
      const any = [...bySize.values()][0];
      const door = any ? doorOf(any) : 'store';
      const cells = sizes.map((s) => {
        const r = bySize.get(s);
        if (!r) return '–';
        return `${fmt(r.ms.median)} (${fmt(r.ms.min)}–${fmt(r.ms.max)}) · ${r.matches}${r.agrees ? '' : ' ✗'}`;
      });
      const ratios = sizes.map((s) => {
        const r = bySize.get(s);
        if (!r || !r.agrees || !r.ms.median) return '–';
        const same = best[s].get(door);
        if (same) return `${(r.ms.median / same).toFixed(2)}×`;
        const all = best[s].get('*');
        return all ? `${(r.ms.median / all).toFixed(2)}× ‡` : '–';
      });
      lines.push(`| ${[backend, door, ...cells, ...ratios].join(' | ')} |`);
    }
    lines.push('');
  }
  return lines.join('\n');
}

/**
 * The 2003 study's own tables beside this run (warm medians), generated from the committed
 * data file, never typed by hand: per request and size, the study's four servers (seconds, its
 * variance marks kept) and its flat-file ÷ database ratio (best of UW and Courier ÷ MySQL),
 * then this run's database path and best flat-file backend in each door that has both, with
 * the same ratio. Absolute times of a 200 MHz machine of 2003 and of this one are not
 * comparable; the ratios within each run are.
 * @param {object[]} results
 * @returns {string[]} Markdown lines
 */
function studyMarkdown(results) {
  const warm = results.filter((r) => r.phase === 'warm');
  const sizes = sizesOf(warm);
  // Doors with a database path and a flat-file side of their own.
  const doors = [
    { door: 'store', db: ['pg'], flat: ['mbox', 'maildir'] },
    { door: 'imap', db: ['mailgate-imap'], flat: ['dovecot-mbox', 'dovecot-maildir'] },
  ].filter((d) => warm.some((r) => d.db.includes(r.backend) || d.flat.includes(r.backend)));
  const pick = (names, request, size) =>
    warm
      .filter((r) => names.includes(r.backend) && r.request === request && r.size === size)
      .reduce(
        (b, r) => (!b || (r.agrees && (!b.agrees || r.ms.median < b.ms.median)) ? r : b),
        null,
      );
  const s = LISA2003.servers;
  const head = [
    'request',
    'size',
    ...Object.keys(s).map((k) => `2003 ${k} (s)`),
    '2003 flat file ÷ MySQL',
    ...doors.flatMap((d) => [
      `${d.db.join('/')} (${d.door}, ms)`,
      `best flat file (${d.door}, ms)`,
      `flat file ÷ ${d.db.join('/')}`,
    ]),
  ];
  const lines = [
    '## The 2003 study beside this run',
    '',
    `The study's own tables (${LISA2003.source}; ${LISA2003.machine}), generated from ` +
      '`packages/bench/data/lisa2003.json`, beside this run\'s warm medians. Its "happy" and ' +
      '"free" (~1% and ~25% of its mail) stand beside this run\'s `text_rare` and `text_common` ' +
      '(the same fractions of this corpus; the literal words are `text_happy` and `text_free` ' +
      'below). A ratio above 1× means the database path is faster. Compare the ratios, not ' +
      'the times: a 200 MHz machine of 2003 against this one. ' +
      'The study queried MySQL directly, with no IMAP server in front of it; here the database ' +
      "path is measured in each door against that door's own flat-file side (store: direct " +
      'mbox/Maildir as UW and Courier read them; imap: Dovecot, one raw client for both). ' +
      `${Object.entries(s)
        .map(([k, v]) => `${k} = ${v}`)
        .join('; ')}. † ‡: the paper's marks for unusual variance.`,
    '',
    `| ${head.join(' | ')} |`,
    `|${head.map((_, i) => (i > 1 ? '---:' : '---')).join('|')}|`,
  ];
  const ratio = (flat, db) =>
    flat && db && db.agrees && flat.agrees && db.ms.median > 0
      ? `${(flat.ms.median / db.ms.median).toFixed(1)}×`
      : '–';
  const cell = (r) => (r ? `${fmt(r.ms.median)}${r.agrees ? '' : ' ✗'}` : '–');
  for (const row of LISA2003.rows) {
    if (sizes.length && !sizes.includes(row.size)) continue;
    const study = Object.keys(s).map(
      (k) => `${row.seconds[k]}${(row.marks && row.marks[k]) || ''}`,
    );
    const flat2003 = Math.min(...LISA2003.flatFile.map((k) => row.seconds[k]));
    const ours = doors.flatMap((d) => {
      const db = pick(d.db, row.request, row.size);
      const flat = pick(d.flat, row.request, row.size);
      const best = flat ? `${cell(flat)} (${flat.backend})` : '–';
      return [cell(db), best, ratio(flat, db)];
    });
    lines.push(
      `| ${[
        row.study,
        row.size,
        ...study,
        `${(flat2003 / row.seconds[LISA2003.database]).toFixed(1)}×`,
        ...ours,
      ].join(' | ')} |`,
    );
  }
  return lines;
}

/**
 * Where the run's wall time went, per size and backend (seconds): load (import, first open),
 * warm reads, expunges with their restores, cold requests with their restarts.
 * @param {Array<{size: string, backend: string, load: number, warm: number, expunge: number, cold: number, total: number}>} wall
 * @param {number} [benchSeconds] the whole run
 * @returns {string[]}
 */
function wallMarkdown(wall, benchSeconds) {
  const sum = wall.reduce((n, w) => n + w.total, 0);
  const lines = [
    "## Where the run's time went (s)",
    '',
    `Whole run ${benchSeconds != null ? benchSeconds.toFixed(0) : '–'} s; backends ` +
      `${sum.toFixed(0)} s (the rest: building mailboxes, choosing queries, reports).`,
    '',
    '| size | backend | load | warm | expunge | cold | total |',
    '|---|---|---:|---:|---:|---:|---:|',
  ];
  const f = (x) => (x >= 10 ? x.toFixed(0) : x.toFixed(1));
  for (const w of wall) {
    lines.push(
      `| ${w.size} | ${w.backend} | ${f(w.load)} | ${f(w.warm)} | ${f(w.expunge)} | ${f(w.cold)} | ${f(w.total)} |`,
    );
  }
  return lines;
}

/**
 * A small SVG line chart, log-scale y: one line per series over ordered x labels. No browser,
 * no dependency: the charts are few points, drawn as polylines.
 * @param {{title: string, xLabels: string[], series: Array<{name: string, points: Array<number|null>}>, yLabel?: string}} c
 * @returns {string} SVG document
 */
function lineChart(c) {
  const W = 640;
  const H = 400;
  const m = { l: 70, r: 160, t: 40, b: 50 };
  const pw = W - m.l - m.r;
  const ph = H - m.t - m.b;
  const values = c.series.flatMap((s) => s.points).filter((v) => v != null && v > 0);
  let lo = Math.floor(Math.log10(values.length ? Math.min(...values) : 1));
  let hi = Math.ceil(Math.log10(values.length ? Math.max(...values) : 10));
  if (hi <= lo) hi = lo + 1;
  const x = (i) => m.l + (c.xLabels.length === 1 ? pw / 2 : (i * pw) / (c.xLabels.length - 1));
  const y = (v) => m.t + ph - ((Math.log10(v) - lo) / (hi - lo)) * ph;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2 - m.r / 2}" y="22" text-anchor="middle" font-size="15">${esc(c.title)}</text>`,
    `<g class="axes" stroke="#333"><line x1="${m.l}" y1="${m.t}" x2="${m.l}" y2="${m.t + ph}"/><line x1="${m.l}" y1="${m.t + ph}" x2="${m.l + pw}" y2="${m.t + ph}"/></g>`,
  ];
  for (let e = lo; e <= hi; e++) {
    const v = 10 ** e;
    const yy = y(v).toFixed(1);
    out.push(
      `<line class="grid" x1="${m.l}" y1="${yy}" x2="${m.l + pw}" y2="${yy}" stroke="#ddd"/>`,
      `<text class="ytick" x="${m.l - 6}" y="${yy}" text-anchor="end" dominant-baseline="middle">${esc(v >= 1 ? String(v) : v.toPrecision(1))}</text>`,
    );
  }
  c.xLabels.forEach((l, i) => {
    out.push(
      `<text class="xtick" x="${x(i).toFixed(1)}" y="${m.t + ph + 18}" text-anchor="middle">${esc(l)}</text>`,
    );
  });
  out.push(
    `<text x="18" y="${m.t + ph / 2}" transform="rotate(-90 18 ${m.t + ph / 2})" text-anchor="middle">${esc(c.yLabel || 'ms (log scale)')}</text>`,
  );
  c.series.forEach((s, k) => {
    const color = COLORS[k % COLORS.length];
    const pts = s.points
      .map((v, i) => (v != null && v > 0 ? `${x(i).toFixed(1)},${y(v).toFixed(1)}` : null))
      .filter(Boolean);
    out.push(`<g class="series" data-name="${esc(s.name)}">`);
    if (pts.length > 1)
      out.push(
        `<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.join(' ')}"/>`,
      );
    for (const p of pts) {
      const [px, py] = p.split(',');
      out.push(`<circle cx="${px}" cy="${py}" r="3.5" fill="${color}"/>`);
    }
    out.push('</g>');
    const ly = m.t + 10 + k * 18;
    out.push(
      `<line x1="${m.l + pw + 14}" y1="${ly}" x2="${m.l + pw + 34}" y2="${ly}" stroke="${color}" stroke-width="2"/>`,
      `<text class="legend" x="${m.l + pw + 40}" y="${ly}" dominant-baseline="middle">${esc(s.name)}</text>`,
    );
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}

/**
 * One chart per request and phase: median ms vs mailbox size, a line per backend.
 * @param {object[]} results
 * @returns {Array<{file: string, svg: string}>}
 */
function charts(results) {
  const sizes = sizesOf(results);
  return group(results).map((grp) => ({
    file: `${grp.request}-${grp.phase}.svg`,
    svg: lineChart({
      title: `${grp.request} (${grp.phase})`,
      xLabels: sizes.map((s) => {
        const r = results.find((x) => x.size === s);
        return `${s} (${r.messages})`;
      }),
      series: [...grp.rows].map(([backend, bySize]) => ({
        name: backend,
        points: sizes.map((s) => (bySize.get(s) ? bySize.get(s).ms.median : null)),
      })),
    }),
  }));
}

/**
 * Writes results.json, results.md and charts/*.svg into dir.
 * @param {string} dir
 * @param {{machine: object, results: object[]}} data exactly the brief's results.json shape
 * @param {object} [extra] queries, notes, command (for the Markdown only)
 * @returns {{json: string, md: string, charts: string[]}}
 */
function writeReport(dir, data, extra = {}) {
  fs.mkdirSync(path.join(dir, 'charts'), { recursive: true });
  const json = path.join(dir, 'results.json');
  fs.writeFileSync(
    json,
    JSON.stringify({ machine: data.machine, results: data.results }, null, 2) + '\n',
  );
  const md = path.join(dir, 'results.md');
  fs.writeFileSync(md, markdown(data, extra) + '\n');
  const files = charts(data.results).map((c) => {
    const f = path.join(dir, 'charts', c.file);
    fs.writeFileSync(f, c.svg);
    return f;
  });
  return { json, md, charts: files };
}

module.exports = {
  markdown,
  studyMarkdown,
  wallMarkdown,
  lineChart,
  charts,
  writeReport,
  LISA2003,
};
