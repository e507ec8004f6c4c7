#!/usr/bin/env node
'use strict';

/*
 * Worst parse time and memory per hostile message (issue 15.3): every message of
 * test/support/hostile.js parsed by parseMessage (the import parser) and by buildView (the
 * message view), each in a fresh Node process so that its peak RSS is its own. No budget is
 * applied here: this measures what the budget would have to stop.
 *
 *   node scripts/torture-report.js [--seed N] [--json]
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

/** Child mode: parse one file, print {ms, mb, outcome}. */
function measureOne(file, mode) {
  const mime = require('@mailgate/mime');
  const raw = fs.readFileSync(file);
  const before = process.memoryUsage().rss;
  const t0 = process.hrtime.bigint();
  let outcome = 'ok';
  try {
    if (mode === 'view') mime.buildView(raw);
    else mime.parseMessage(raw);
  } catch (err) {
    if (err.name !== 'MessageParseError') throw err;
    outcome = err.reason;
  }
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const peak = process.resourceUsage().maxRSS * 1024;
  process.stdout.write(JSON.stringify({ ms, mb: Math.max(0, peak - before) / 2 ** 20, outcome }));
}

/**
 * Measures every hostile message with both parsers.
 * @param {{seed?: number}} [o]
 * @returns {{name: string, bytes: number, parse: object, view: object}[]}
 */
function measureAll(o = {}) {
  const { hostileMessages } = require('../test/support/hostile');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailgate-torture-'));
  const rows = [];
  try {
    for (const m of hostileMessages(o.seed)) {
      const file = path.join(dir, m.name);
      fs.writeFileSync(file, m.raw);
      const row = { name: m.name, bytes: m.raw.length };
      for (const mode of ['parse', 'view']) {
        const r = spawnSync(process.execPath, [__filename, '--one', file, mode], {
          encoding: 'utf8',
          timeout: 60000,
        });
        if (r.status !== 0) {
          row[mode] = {
            ms: null,
            mb: null,
            outcome: `crashed: ${r.signal || r.stderr.slice(-300)}`,
          };
        } else {
          row[mode] = JSON.parse(r.stdout);
        }
      }
      rows.push(row);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

/** The worst time and memory over all rows and both parsers. */
function worst(rows) {
  let time = { ms: 0 };
  let mem = { mb: 0 };
  for (const r of rows) {
    for (const mode of ['parse', 'view']) {
      const x = r[mode];
      if (x.ms !== null && x.ms > time.ms) time = { ms: x.ms, name: r.name, mode };
      if (x.mb !== null && x.mb > mem.mb) mem = { mb: x.mb, name: r.name, mode };
    }
  }
  return { time, mem };
}

function table(rows) {
  const lines = [
    'message                                 bytes     parse ms   MB   view ms    MB  outcome',
  ];
  for (const r of rows) {
    const f = (x) =>
      `${x.ms === null ? '   -' : x.ms.toFixed(0).padStart(8)} ${x.mb === null ? '  -' : x.mb.toFixed(0).padStart(5)}`;
    lines.push(
      `${r.name.padEnd(38)} ${String(r.bytes).padStart(9)} ${f(r.parse)} ${f(r.view)}  ${r.parse.outcome}/${r.view.outcome}`,
    );
  }
  const w = worst(rows);
  lines.push(
    `worst time: ${w.time.ms.toFixed(0)} ms (${w.time.name}, ${w.time.mode}); ` +
      `worst memory: ${w.mem.mb.toFixed(0)} MB peak RSS growth (${w.mem.name}, ${w.mem.mode})`,
  );
  return lines.join('\n');
}

module.exports = { measureAll, worst, table };

if (require.main === module) {
  const args = process.argv.slice(2);
  if (args[0] === '--one') {
    measureOne(args[1], args[2]);
  } else {
    const seed = args.includes('--seed') ? Number(args[args.indexOf('--seed') + 1]) : 15;
    const rows = measureAll({ seed });
    if (args.includes('--json'))
      process.stdout.write(JSON.stringify({ seed, rows, worst: worst(rows) }) + '\n');
    else
      process.stdout.write(
        `${os.cpus()[0].model}, Node ${process.version}, seed ${seed}\n${table(rows)}\n`,
      );
  }
}
