'use strict';

/*
 * Worst parse time and memory per hostile message (issue 15.3): every message of
 * @mailgate/test-support/hostile parsed by parseMessage (the import parser) and by buildView (the
 * message view), each in a fresh Node process. A message's memory is its own cost: the peak
 * RSS of its process minus the peak RSS of a baseline process that loads the same modules and
 * parses a three-line message (issue 30.5: the raw peak of a process is Node's own baseline,
 * ~40-260 MB by machine, the same for a 1 KB message as for a hostile one). No budget is
 * applied while measuring; the report compares the worst figures with the budgets
 * (MAILGATE_PARSE_TIME_MS, MAILGATE_PARSE_MEMORY_MB) and exits 1 when one is over. This is a
 * benchmark: run it on a quiet machine. `npm test` checks behaviour only (test/torture.test.js).
 *
 *   npm run bench:torture [-- --seed N] [--json]
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { option, testSupport } = require('../command-kit');

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
  process.stdout.write(JSON.stringify({ ms, peak, before, outcome }));
}

const BASELINE_MESSAGE = 'From: a@example.org\nSubject: baseline\n\nhello\n';

/** Runs one measuring child; null when it crashed (the reason in `outcome`). */
function child(file, mode) {
  const r = spawnSync(process.execPath, [__filename, '--one', file, mode], {
    encoding: 'utf8',
    timeout: 600000,
  });
  if (r.status !== 0) return { crashed: `crashed: ${r.signal || r.stderr.slice(-300)}` };
  return JSON.parse(r.stdout);
}

/**
 * Measures every hostile message with both parsers.
 * @param {{seed?: number}} [o]
 * @returns {{name: string, bytes: number, parse: object, view: object}[]}
 */
function measureAll(o = {}) {
  const { hostileMessages } = testSupport('hostile');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailgate-torture-'));
  const rows = [];
  try {
    const baseFile = path.join(dir, 'baseline.eml');
    fs.writeFileSync(baseFile, BASELINE_MESSAGE);
    const baseline = {};
    for (const mode of ['parse', 'view']) baseline[mode] = child(baseFile, mode).peak || 0;
    for (const m of hostileMessages(o.seed)) {
      const file = path.join(dir, m.name);
      fs.writeFileSync(file, m.raw);
      const row = { name: m.name, bytes: m.raw.length };
      for (const mode of ['parse', 'view']) {
        const r = child(file, mode);
        row[mode] = r.crashed
          ? { ms: null, mb: null, outcome: r.crashed }
          : { ms: r.ms, mb: Math.max(0, r.peak - baseline[mode]) / 2 ** 20, outcome: r.outcome };
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
      `worst memory: ${w.mem.mb.toFixed(0)} MB over the baseline process (${w.mem.name}, ${w.mem.mode})`,
  );
  const b = budgets(w);
  lines.push(
    `budgets: ${b.timeMs} ms per message (MAILGATE_PARSE_TIME_MS): ${b.timeOk ? 'within' : 'OVER'}; ` +
      `${b.memoryMb} MB (MAILGATE_PARSE_MEMORY_MB): ${b.memoryOk ? 'within' : 'OVER'}`,
  );
  return lines.join('\n');
}

/** The worst figures against the parse budgets of the configuration. */
function budgets(w) {
  const { loadConfig } = require('@mailgate/core');
  const c = loadConfig();
  const timeMs = c.parseTimeMs;
  const memoryMb = c.parseMemoryMb;
  return {
    timeMs,
    memoryMb,
    timeOk: !timeMs || w.time.ms < timeMs,
    memoryOk: !memoryMb || w.mem.mb < memoryMb,
  };
}

/**
 * `bench torture`: see the file comment; exit code 1 when a worst figure is over its budget.
 * @param {string[]} args --seed N, --json
 */
function main(args) {
  const seed = Number(option(args, '--seed', 15));
  const rows = measureAll({ seed });
  const w = worst(rows);
  const b = budgets(w);
  if (args.includes('--json'))
    process.stdout.write(JSON.stringify({ seed, rows, worst: w, budgets: b }) + '\n');
  else
    process.stdout.write(
      `${os.cpus()[0].model}, Node ${process.version}, seed ${seed}\n${table(rows)}\n`,
    );
  if (!b.timeOk || !b.memoryOk) process.exitCode = 1;
}

module.exports = {
  description: 'worst parse time and memory per hostile message against the parse budgets',
  usage: '[--seed N] [--json]',
  run: main,
  measureAll,
  worst,
  table,
  budgets,
};

// Child mode: this file is also the measuring process `child()` spawns, one per message.
if (require.main === module && process.argv[2] === '--one') {
  measureOne(process.argv[3], process.argv[4]);
}
