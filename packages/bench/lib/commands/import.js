'use strict';

/*
 * Import benchmark (npm run bench:import): the Enron set (../shared/corpus) imported with
 * `mailgate import mh` into a fresh database, at a quarter of the set and at the whole set,
 * so that both throughput and memory growth with input size are visible. Writes
 * bench/results/import-<timestamp>.json with machine facts.
 *
 *   npm run bench:import [-- --only full|quarter] [--keep]
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { EmbeddedPostgres } = require('@mailgate/service');
const { run, option, corpusDir, saveResult } = require('../command-kit');
const { machineFacts } = require('../machine');

/**
 * `bench import`: see the file comment.
 * @param {string[]} args --only full|quarter, --keep
 */
function main(args) {
  const only = option(args, '--only', null);
  const corpus = corpusDir();
  if (!corpus) throw new Error('../shared/corpus not found: the benchmark needs the Enron set');
  const enron = path.join(corpus, 'enron', 'maildir');
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'mailgate-bench-'));
  const all = listUsers(enron);
  const total = all.reduce((n, u) => n + u.count, 0);
  const quarterDir = path.join(scratch, 'quarter');
  let q = 0;
  for (const u of all) {
    if (q >= total / 4) break;
    fs.cpSync(path.join(enron, u.name), path.join(quarterDir, u.name), { recursive: true });
    q += u.count;
  }
  const env = { ...process.env, LOG_LEVEL: 'error' };
  let home = null;
  if (!process.env.DATABASE_URL) {
    home = path.join(scratch, 'home');
    env.MAILGATE_HOME = home;
    run(['db', 'start'], env);
  }
  const runs = [];
  try {
    for (const [label, dir] of [
      ['quarter', quarterDir],
      ['full', enron],
    ]) {
      if (only && only !== label) continue;
      const pgPid = home ? JSON.parse(run(['db', 'status', '--json'], env).stdout).pid : null;
      const pg0 = pgCpuMs(pgPid);
      const t0 = Date.now();
      const r = run(
        ['import', 'mh', dir, '--user', `bench-${label}-${Date.now()}`, '--json', '--quiet'],
        env,
      );
      const report = JSON.parse(r.stdout.trim().split('\n').pop());
      const wall = (Date.now() - t0) / 1000;
      const pg1 = pgCpuMs(pgPid);
      runs.push({
        label,
        messages: report.messages,
        imported: report.imported,
        quarantined: report.quarantined,
        bytes: report.bytes,
        seconds: report.seconds,
        wallSeconds: wall,
        msgPerSec: Number((report.messages / report.seconds).toFixed(1)),
        mbPerSec: Number((report.bytes / 1048576 / report.seconds).toFixed(2)),
        peakRssMB: report.peakRssMB,
        // Where the time went: the import's stage timings (ms; README "import --json"), the
        // importing process's CPU and the embedded server's (all its processes), so that the
        // limit of a 2-core machine is visible: msg/s ≤ cores / (CPU ms per message).
        stages: report.stages,
        threads: report.threads,
        cpu:
          pg0 != null && pg1 != null
            ? {
                importMs: report.stages && report.stages.cpuMs,
                postgresMs: Math.round(pg1 - pg0),
                msPerMessage: Number(
                  (
                    ((report.stages ? report.stages.cpuMs : 0) + (pg1 - pg0)) /
                    report.messages
                  ).toFixed(3),
                ),
              }
            : null,
      });
      console.error(
        `${label}: ${report.messages} msgs, ${(report.bytes / 1048576).toFixed(1)} MB in ${report.seconds}s → ` +
          `${runs.at(-1).msgPerSec} msg/s, ${runs.at(-1).mbPerSec} MB/s, peak RSS ${report.peakRssMB} MB`,
      );
    }
    const pgVersion = run(['db', 'status', '--json'], env).stdout;
    const result = {
      benchmark: 'import',
      command: `npm run bench:import${args.length ? ' -- ' + args.join(' ') : ''}`,
      date: new Date().toISOString(),
      machine: machineFacts({ work: os.tmpdir() }),
      database: process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded PostgreSQL 17',
      embeddedStatus: pgVersion ? JSON.parse(pgVersion) : null,
      workers: process.env.MAILGATE_IMPORT_WORKERS || String(os.availableParallelism()),
      batchSize: process.env.MAILGATE_BATCH_SIZE || '250',
      runs,
    };
    saveResult('import', result.date, result);
  } finally {
    if (home) {
      new EmbeddedPostgres(home).stop().then(() => {
        if (!args.includes('--keep')) fs.rmSync(scratch, { recursive: true, force: true });
      });
    } else if (!args.includes('--keep')) fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * CPU time (ms) of the embedded server: the postmaster and its children, exited backends
 * included (Linux /proc/<pid>/stat utime, stime, cutime, cstime; reaped children count in
 * cutime/cstime). null without /proc or with DATABASE_URL.
 */
function pgCpuMs(pid) {
  if (!pid) return null;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = [11, 12, 13, 14].reduce((n, i) => n + Number(f[i]), 0);
    let live = 0;
    for (const child of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      try {
        const cs = fs.readFileSync(`/proc/${child}/stat`, 'utf8');
        const cf = cs.slice(cs.lastIndexOf(')') + 2).split(' ');
        if (Number(cf[1]) === pid) live += Number(cf[11]) + Number(cf[12]);
      } catch {
        // gone meanwhile
      }
    }
    return ((ticks + live) * 1000) / 100; // USER_HZ = 100 on Linux
  } catch {
    return null;
  }
}

function listUsers(root) {
  return fs
    .readdirSync(root)
    .sort()
    .map((name) => ({ name, count: countFiles(path.join(root, name)) }));
}

function countFiles(dir) {
  let n = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) n += countFiles(path.join(dir, e.name));
    else if (e.isFile()) n++;
  }
  return n;
}

module.exports = {
  description: 'import throughput and memory: a quarter of the Enron set and the whole set',
  usage: '[--only full|quarter] [--keep]',
  run: main,
};
