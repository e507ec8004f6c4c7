'use strict';

/*
 * Whole-server migration benchmark (issue 33 item 6; npm run bench:fleet): one real Dovecot
 * serving the Enron accounts of ../shared/corpus (137, 44,755 messages, Maildir++ with folders)
 * migrated into a fresh embedded PostgreSQL by `mailgate migrate --accounts FILE` and 1, then 2
 * `mailgate migrate --worker --until-done` processes (each --concurrency C, no per-host or
 * rate cap). Per run: wall time, messages/s, CPU seconds and CPU ms per message of each side —
 * the workers (GNU time of each process), PostgreSQL (the embedded postmaster and its
 * backends) and Dovecot (its master and the imap processes it reaped) — and the old server's
 * load (Dovecot CPU seconds per wall second). The report must say every account cut over.
 * Beside it, in the same run, Dovecot's own migration tool: `doveadm backup -R` from an imapc:
 * source (dsync pulling each account over IMAP into a local Maildir), one account after
 * another and two at a time. Writes bench/results/fleet-<timestamp>.json.
 *
 *   npm run bench:fleet [-- --users N] [--workers 1,2] [--concurrency C] [--no-dsync] [--keep]
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { EmbeddedPostgres } = require('@mailgate/service');
const { ROOT, CLI, run, option, corpusDir } = require('../command-kit');
const { machineFacts } = require('../machine');
const { enronUsers, startFleetDovecot, writeAccountsFile } = require('../fleet');

const TIME = '/usr/bin/time';

/**
 * CPU seconds of a process and the children it reaped, plus its live children's own
 * (/proc/<pid>/stat utime, stime, cutime, cstime); null when it is gone.
 */
function treeCpu(pid) {
  const read = (p) => {
    const s = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
    return s.slice(s.lastIndexOf(')') + 2).split(' ');
  };
  try {
    const f = read(pid);
    let ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    for (const c of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      try {
        const cf = read(c);
        if (Number(cf[1]) === pid) ticks += Number(cf[11]) + Number(cf[12]);
      } catch {
        // gone meanwhile
      }
    }
    return ticks / 100; // USER_HZ = 100 on Linux
  } catch {
    return null;
  }
}

/** Runs a command under GNU time; resolves with its CPU seconds, wall and max RSS. */
function timed(cmd, args, env) {
  const out = path.join(os.tmpdir(), `mg-fleet-time-${process.pid}-${Math.random()}`);
  return new Promise((resolve, reject) => {
    const p = spawn(TIME, ['-o', out, '-f', '%U %S %e %M', cmd, ...args], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    p.stderr.on('data', (d) => (err = (err + d).slice(-4000)));
    p.on('error', reject);
    p.on('close', (code) => {
      const [user, sys, wall, rssKb] = fs.readFileSync(out, 'utf8').trim().split(/\s+/).map(Number);
      fs.rmSync(out, { force: true });
      if (code !== 0) reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err}`));
      else
        resolve({ cpuSeconds: user + sys, wallSeconds: wall, maxRssMB: Math.round(rssKb / 1024) });
    });
  });
}

/** One fleet run of `workers` worker processes over `accounts`, users named `<prefix><user>`. */
async function fleetRun({ workers, concurrency, prefix, accounts, inst, env, scratch, pgPid }) {
  const dir = path.join(scratch, `run-${prefix}`);
  const file = writeAccountsFile(
    dir,
    // Mailgate users named per run; Dovecot knows them without the prefix.
    accounts.map((a) => ({ ...a, user: `${prefix}${a.user}`, login: a.user })),
    inst,
  );
  const reg = JSON.parse(run(['migrate', '--accounts', file, '--json'], env).stdout);
  const pg0 = treeCpu(pgPid);
  const dv0 = treeCpu(inst.pid);
  // The machine's load around the run: a shared machine's wall time is not the code's alone.
  const load0 = os.loadavg();
  const t0 = Date.now();
  const procs = await Promise.all(
    Array.from({ length: workers }, () =>
      timed(
        process.execPath,
        [CLI, 'migrate', '--worker', '--until-done', '--concurrency', String(concurrency)],
        env,
      ),
    ),
  );
  const wall = (Date.now() - t0) / 1000;
  const pg = treeCpu(pgPid) - pg0;
  const dv = treeCpu(inst.pid) - dv0;
  const rep = JSON.parse(
    spawnSync(process.execPath, [CLI, 'migrate', '--report', '--json'], {
      env,
      encoding: 'utf8',
      maxBuffer: 1 << 26,
    }).stdout,
  );
  const mine = rep.accounts.filter((a) => a.user.startsWith(prefix));
  const messages = mine.reduce((n, a) => n + a.messages, 0);
  const bytes = mine.reduce((n, a) => n + a.bytes, 0);
  const mg = procs.reduce((n, p) => n + p.cpuSeconds, 0);
  const per = (s) => Number(((s * 1000) / messages).toFixed(3));
  return {
    workers,
    concurrency,
    accounts: mine.length,
    registered: reg.registered,
    cutOver: mine.filter((a) => a.state === 'cutover').length,
    failed: mine.filter((a) => a.state === 'failed').map((a) => ({ user: a.user, ...a.error })),
    upstreamMessages: mine.reduce((n, a) => n + (a.upstreamMessages || 0), 0),
    messages,
    bytes,
    wallSeconds: Number(wall.toFixed(1)),
    msgPerSec: Number((messages / wall).toFixed(1)),
    cpuSeconds: {
      mailgate: Number(mg.toFixed(1)),
      postgres: Number(pg.toFixed(1)),
      dovecot: Number(dv.toFixed(1)),
    },
    cpuMsPerMessage: { mailgate: per(mg), postgres: per(pg), dovecot: per(dv) },
    // The old server's load: Dovecot's CPU seconds per wall second (1.0 = one core busy).
    dovecotCores: Number((dv / wall).toFixed(2)),
    workerMaxRssMB: Math.max(...procs.map((p) => p.maxRssMB)),
    loadAverage: {
      start: load0.map((x) => Number(x.toFixed(2))),
      end: os.loadavg().map((x) => Number(x.toFixed(2))),
    },
  };
}

/**
 * Dovecot's own migration over IMAP: `doveadm backup -R -u U imapc:` per account (dsync with
 * the imapc storage as the source, the user's Maildir under `dst` as the destination), with
 * `parallel` accounts at a time. Same Dovecot as the source; the destination is a Maildir.
 */
async function dsyncRun({ accounts, inst, parallel, dst }) {
  fs.rmSync(dst, { recursive: true, force: true });
  fs.mkdirSync(dst, { recursive: true });
  fs.chownSync(dst, 5000, 5000);
  const dv0 = treeCpu(inst.pid);
  const load0 = os.loadavg();
  const t0 = Date.now();
  let cpu = 0;
  const queue = [...accounts];
  const one = async () => {
    for (let a = queue.shift(); a; a = queue.shift()) {
      const r = await timed('/usr/bin/doveadm', [
        '-c', inst.conf,
        '-o', `mail_location=maildir:${dst}/${a.user}`,
        '-o', 'imapc_host=127.0.0.1',
        '-o', `imapc_port=${inst.port}`,
        '-o', `imapc_user=${a.user}`,
        '-o', `imapc_password=${a.password}`,
        '-o', 'imapc_features=rfc822.size fetch-headers',
        '-o', 'mail_prefetch_count=20',
        'backup', '-R', '-u', a.user, 'imapc:',
      ], process.env); // prettier-ignore
      cpu += r.cpuSeconds;
    }
  };
  await Promise.all(Array.from({ length: parallel }, one));
  const wall = (Date.now() - t0) / 1000;
  // The source's share: the serving Dovecot's processes minus the doveadm clients (not its
  // children: doveadm runs standalone here).
  const dv = treeCpu(inst.pid) - dv0;
  let files = 0;
  const count = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) count(path.join(d, e.name));
      else if (/^(cur|new)$/.test(path.basename(d))) files++;
    }
  };
  count(dst);
  return {
    tool: 'doveadm backup -R (dsync, imapc: source)',
    parallel,
    accounts: accounts.length,
    messages: files,
    wallSeconds: Number(wall.toFixed(1)),
    msgPerSec: Number((files / wall).toFixed(1)),
    cpuSeconds: { doveadm: Number(cpu.toFixed(1)), dovecot: Number(dv.toFixed(1)) },
    cpuMsPerMessage: {
      doveadm: Number(((cpu * 1000) / files).toFixed(3)),
      dovecot: Number(((dv * 1000) / files).toFixed(3)),
    },
    dovecotCores: Number((dv / wall).toFixed(2)),
    loadAverage: {
      start: load0.map((x) => Number(x.toFixed(2))),
      end: os.loadavg().map((x) => Number(x.toFixed(2))),
    },
  };
}

async function main(args) {
  const corpus = corpusDir();
  if (!corpus) throw new Error('../shared/corpus not found: the benchmark needs the Enron set');
  const root = path.join(corpus, 'enron', 'maildir');
  const n = Number(option(args, '--users', 0)) || Infinity;
  const users = enronUsers(root).slice(0, n);
  const workerCounts = String(option(args, '--workers', '1,2'))
    .split(',')
    .map(Number);
  const concurrency = Number(option(args, '--concurrency', 2));
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'mailgate-bench-fleet-'));
  const cache = path.join(os.tmpdir(), 'mailgate-fleet-maildirs');
  const up = await startFleetDovecot(root, users, cache);
  const env = {
    ...process.env,
    LOG_LEVEL: 'error',
    MAILGATE_MIGRATE_PER_HOST: '1000',
    MAILGATE_MIGRATE_RATE: '0',
  };
  let home = null;
  if (!process.env.DATABASE_URL) {
    home = path.join(scratch, 'home');
    env.MAILGATE_HOME = home;
    run(['db', 'start'], env);
  }
  try {
    const pgPid = home ? JSON.parse(run(['db', 'status', '--json'], env).stdout).pid : null;
    const runs = [];
    for (const w of workerCounts) {
      console.error(`fleet: ${users.length} accounts, ${w} worker(s) × ${concurrency} …`);
      const r = await fleetRun({
        workers: w,
        concurrency,
        prefix: `w${w}-`,
        accounts: up.accounts,
        inst: up.inst,
        env,
        scratch,
        pgPid,
      });
      console.error(
        `  ${r.cutOver}/${r.accounts} cut over, ${r.messages} messages in ${r.wallSeconds} s → ` +
          `${r.msgPerSec} msg/s; CPU ms/msg mailgate ${r.cpuMsPerMessage.mailgate}, ` +
          `PostgreSQL ${r.cpuMsPerMessage.postgres}, Dovecot ${r.cpuMsPerMessage.dovecot}`,
      );
      runs.push(r);
    }
    const dsync = [];
    if (!args.includes('--no-dsync')) {
      for (const parallel of [1, 2]) {
        console.error(`dsync: doveadm backup -R imapc:, ${parallel} at a time …`);
        const r = await dsyncRun({
          accounts: up.accounts,
          inst: up.inst,
          parallel,
          dst: path.join(scratch, 'dsync'),
        });
        console.error(`  ${r.messages} messages in ${r.wallSeconds} s → ${r.msgPerSec} msg/s`);
        dsync.push(r);
      }
    }
    const result = {
      benchmark: 'fleet',
      command: `npm run bench:fleet${args.length ? ' -- ' + args.join(' ') : ''}`,
      date: new Date().toISOString(),
      machine: machineFacts({ work: os.tmpdir() }),
      database: process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded PostgreSQL 17',
      upstream: {
        server: 'Dovecot 2.3 (Debian), Maildir++, one instance, loopback, plaintext',
        accounts: up.accounts.length,
        messages: up.accounts.reduce((s, a) => s + a.messages, 0),
        bytes: up.accounts.reduce((s, a) => s + a.bytes, 0),
      },
      importWorkers: process.env.MAILGATE_IMPORT_WORKERS || String(os.availableParallelism()),
      runs,
      dsync,
      available: {
        'doveadm sync/backup (dsync)': fs.existsSync('/usr/bin/doveadm'),
        imapsync: spawnSync('sh', ['-c', 'command -v imapsync']).status === 0,
        mbsync: spawnSync('sh', ['-c', 'command -v mbsync']).status === 0,
        offlineimap: spawnSync('sh', ['-c', 'command -v offlineimap']).status === 0,
      },
    };
    const outDir = path.join(ROOT, 'bench', 'results');
    fs.mkdirSync(outDir, { recursive: true });
    const file = path.join(outDir, `fleet-${result.date.replace(/[:.]/g, '-')}.json`);
    fs.writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
    console.error(`wrote ${path.relative(ROOT, file)}`);
    const bad = runs.filter(
      (r) => r.cutOver !== r.accounts || r.messages !== result.upstream.messages,
    );
    if (bad.length) {
      throw new Error(
        `not every account cut over with all its messages: ${JSON.stringify(bad.map((r) => r.failed))}`,
      );
    }
  } finally {
    await up.inst.stop().catch(() => {});
    if (home) await new EmbeddedPostgres(home).stop().catch(() => {});
    if (!args.includes('--keep')) fs.rmSync(scratch, { recursive: true, force: true });
  }
}

module.exports = {
  description:
    'whole-server migration: the 137 Enron accounts on Dovecot moved by 1 and 2 workers, beside doveadm backup (dsync)',
  usage: '[--users N] [--workers 1,2] [--concurrency C] [--no-dsync] [--keep]',
  run: main,
};
