'use strict';

/*
 * Import throughput on Citus (issue 34.7, npm run citus:import-bench): two `mailgate import
 * mbox` processes at once, each loading the same bench mailbox for a user of its own, into
 *
 *   plain  a single PostgreSQL 15: a database without the citus extension on the coordinator's
 *          server (same build, same settings, same machine),
 *   1      a Citus database with one worker (both users' shards on it),
 *   2      a Citus database with two workers, the two users placed on different workers,
 *
 * of the cluster that scripts/citus/citus.sh runs (CITUS_PORT, CITUS_DATA: give the run a
 * cluster of its own, so that no test's work is counted). Per configuration: messages/s over
 * the wall time of both imports; CPU seconds of each node (its postmaster's children, ended
 * and alive, from /proc: what the node's PostgreSQL spent, whichever database) and of the two
 * importers (/usr/bin/time), per message; bytes on disk the import added on each node
 * (pg_database_size). Writes <out>/import.json and import.md.
 *
 *   npm run citus:import-bench -- [--size medium] [--out DIR] [--configs plain,1,2]
 *
 * Runs once per configuration; the machine's load is recorded before and after. A tool of the
 * cluster script beside it (it makes databases of the cluster and reads each node's processes),
 * not a bench command: the bench's commands reach PostgreSQL through the service only.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, execFileSync } = require('node:child_process');
const { SIZES, buildMailbox, machineFacts } = require('@mailgate/bench');
const { corpusDir } = require('@mailgate/test-support/corpus');

const ROOT = path.resolve(__dirname, '..', '..');
const CLI = path.join(ROOT, 'packages', 'cli', 'bin', 'mailgate.js');
const CITUS_SH = path.join(__dirname, 'citus.sh');

/** The value after `name` in the arguments, or `dflt`. */
const option = (args, name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** The data directory of node n of citus.sh's cluster (its CITUS_DATA / CITUS_CACHE rule). */
function nodeDir(n) {
  const cache =
    process.env.CITUS_CACHE ||
    path.join(
      process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'),
      'mailgate',
      'citus-12.1.12',
    );
  return path.join(process.env.CITUS_DATA || path.join(cache, 'cluster'), `node${n}`);
}

/** CPU seconds of a process from /proc/<pid>/stat: own, and of its reaped children. */
function procCpu(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields after the name start at 3 (state): utime 14, stime 15, cutime 16, cstime 17.
  const at = (k) => Number(f[k - 3]);
  return { own: (at(14) + at(15)) / CLK_TCK, reaped: (at(16) + at(17)) / CLK_TCK, ppid: at(4) };
}

/**
 * CPU seconds a node's PostgreSQL has spent so far: the postmaster, its ended children (reaped:
 * backends of closed connections) and its live ones (workers' cached connections, autovacuum).
 */
function nodeCpu(n) {
  const pm = Number(
    fs.readFileSync(path.join(nodeDir(n), 'postmaster.pid'), 'utf8').split('\n')[0],
  );
  const root = procCpu(pm);
  let total = root.own + root.reaped;
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const p = procCpu(Number(d));
      if (p.ppid === pm) total += p.own;
    } catch {
      // ended meanwhile: counted in the postmaster's reaped time instead
    }
  }
  return total;
}

function citusSh(args, env) {
  return execFileSync('bash', [CITUS_SH, ...args], { encoding: 'utf8', env }).trim();
}

/** One query on a database of the cluster (measurement only: placements and sizes). */
async function query(url, sql, params = []) {
  const pg = require('pg');
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows;
  } finally {
    await c.end();
  }
}

function withDb(url, db, port) {
  const u = new URL(url);
  u.pathname = '/' + db;
  if (port) u.port = String(port);
  return u.toString();
}

/** `mailgate import mbox` for one user, timed by /usr/bin/time (wall, user, system). */
function importer(env, mbox, user, timeFile) {
  const child = spawn(
    '/usr/bin/time',
    ['-f', '%e %U %S', '-o', timeFile, process.execPath, CLI, 'import', 'mbox', mbox].concat([
      '--user',
      user,
      '--mailbox',
      'INBOX',
      '--json',
      '--quiet',
    ]),
    { env, stdio: ['ignore', 'pipe', 'ignore'] },
  );
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`import for ${user} exited ${code}`));
      const [wall, usr, sys] = fs.readFileSync(timeFile, 'utf8').trim().split(/\s+/).map(Number);
      resolve({ report: JSON.parse(out.trim().split('\n').pop()), wall, cpu: usr + sys });
    });
  });
}

/** Users for the two importers: on different workers when the database has two. */
async function pickUsers(url, env, workers) {
  const users = [];
  const seen = new Set();
  for (let i = 1; users.length < 2 && i <= 20; i++) {
    const name = `imp${i}`;
    execFileSync(process.execPath, [CLI, 'user', 'add', name], { env, stdio: 'ignore' });
    if (workers === 'plain') {
      users.push({ name });
      continue;
    }
    const [row] = await query(
      url,
      `SELECT p.nodeport FROM users u, pg_dist_shard_placement p
        WHERE u.name = $1 AND p.shardid = get_shard_id_for_distribution_column('mailboxes', u.id)`,
      [name],
    );
    if (workers === '2' && seen.has(row.nodeport)) continue;
    seen.add(row.nodeport);
    users.push({ name, worker: row.nodeport });
  }
  if (users.length < 2) throw new Error('no two users on different workers among 20');
  return users;
}

async function runConfig(cfg, base, box, log) {
  const db = `mgbench_imp_${cfg}`;
  const port = new URL(base).port;
  citusSh(['drop-db', db]);
  const url = citusSh(['create-db', db, cfg]);
  const nodes = cfg === 'plain' ? [0] : cfg === '1' ? [0, 1] : [0, 1, 2];
  const env = { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'error' };
  delete env.ELASTICSEARCH_URL;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mailgate-citus-import-'));
  try {
    const users = await pickUsers(url, env, cfg);
    const sizeOf = async () => {
      const out = [];
      for (const n of nodes) {
        const [r] = await query(
          withDb(url, db, Number(port) + n),
          'SELECT pg_database_size(current_database())::bigint AS b',
        );
        out.push(Number(r.b));
      }
      return out;
    };
    const bytesBefore = await sizeOf();
    const cpuBefore = nodes.map(nodeCpu);
    const load = os.loadavg();
    log(
      `${cfg}: two importers (${users.map((u) => u.name + (u.worker ? '@' + u.worker : '')).join(', ')})`,
    );
    const t0 = process.hrtime.bigint();
    const done = await Promise.all(
      users.map((u, i) => importer(env, box.mbox, u.name, path.join(tmp, `time${i}`))),
    );
    const wall = Number(process.hrtime.bigint() - t0) / 1e9;
    const cpuAfter = nodes.map(nodeCpu);
    const bytesAfter = await sizeOf();
    const messages = done.reduce((n, d) => n + d.report.imported, 0);
    const cpu = nodes.map((n, i) => cpuAfter[i] - cpuBefore[i]);
    const result = {
      config: cfg,
      workers: cfg === 'plain' ? 0 : Number(cfg),
      users,
      messages,
      rawBytes: box.bytes * 2,
      wallSeconds: round(wall, 2),
      messagesPerSecond: round(messages / wall, 1),
      importers: done.map((d) => ({
        wall: d.wall,
        cpuSeconds: round(d.cpu, 2),
        seconds: d.report.seconds,
      })),
      importerCpuMsPerMessage: round((done.reduce((s, d) => s + d.cpu, 0) * 1000) / messages, 3),
      nodes: nodes.map((n, i) => ({
        node: n === 0 ? 'coordinator' : `worker ${n}`,
        port: Number(port) + n,
        cpuSeconds: round(cpu[i], 2),
        cpuMsPerMessage: round((cpu[i] * 1000) / messages, 3),
        bytesAdded: bytesAfter[i] - bytesBefore[i],
        bytesPerMessage: Math.round((bytesAfter[i] - bytesBefore[i]) / messages),
      })),
      loadBefore: load.map((x) => round(x, 2)),
      loadAfter: os.loadavg().map((x) => round(x, 2)),
    };
    log(
      `${cfg}: ${messages} messages in ${result.wallSeconds} s = ${result.messagesPerSecond}/s; ` +
        result.nodes.map((n) => `${n.node} ${n.cpuMsPerMessage} ms CPU/msg`).join(', '),
    );
    return result;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
    citusSh(['drop-db', db]);
  }
}

const round = (x, d) => Math.round(x * 10 ** d) / 10 ** d;

function markdown(data) {
  const lines = [
    `# Import into Citus: two importers at once (${data.size}, ${data.messagesPerImporter} messages each)`,
    '',
    `Command: \`${data.command}\`. ${data.machine.cpu}, ${data.machine.cores} cores shared with ` +
      `other work (the 1-minute load average before → after each configuration is in the table); ` +
      `${data.machine.postgres}. Raw mail: ${Math.round(data.results[0].rawBytes / data.results[0].messages)} B/message.`,
    '',
    '| configuration | messages | wall s | messages/s | node | node CPU s | node CPU ms/message | bytes added/message | load before → after |',
    '|---|---:|---:|---:|---|---:|---:|---:|---|',
  ];
  for (const r of data.results) {
    r.nodes.forEach((n, i) => {
      lines.push(
        `| ${i ? '' : r.config === 'plain' ? 'single PostgreSQL' : `Citus, ${r.workers} worker${r.workers > 1 ? 's' : ''}`} | ${i ? '' : r.messages} | ${i ? '' : r.wallSeconds} | ${i ? '' : r.messagesPerSecond} | ${n.node} | ${n.cpuSeconds} | ${n.cpuMsPerMessage} | ${n.bytesPerMessage} | ${i ? '' : `${r.loadBefore[0]} → ${r.loadAfter[0]}`} |`,
      );
    });
  }
  lines.push(
    '',
    'Importer processes (parse, derive, COPY): ' +
      data.results
        .map((r) => `${r.config}: ${r.importerCpuMsPerMessage} ms CPU/message`)
        .join('; ') +
      '.',
  );
  return lines.join('\n') + '\n';
}

/**
 * The run: see the file comment.
 * @param {string[]} args --size, --out, --configs
 */
async function main(args) {
  const size = option(args, '--size', 'medium');
  if (!SIZES[size]) throw Object.assign(new Error(`unknown size ${size}`), { code: 'USAGE' });
  const configs = option(args, '--configs', 'plain,1,2').split(',');
  for (const c of configs) {
    if (!['plain', '1', '2'].includes(c)) {
      throw Object.assign(new Error(`unknown configuration ${c} (plain, 1, 2)`), { code: 'USAGE' });
    }
  }
  const out = path.resolve(option(args, '--out', path.join(ROOT, 'bench', 'results')));
  const corpus = corpusDir();
  if (!corpus) throw new Error('../shared/corpus not found: the benchmark needs the Enron set');
  const log = (s) => process.stderr.write(s + '\n');
  const work = path.join(os.tmpdir(), 'mailgate-bench');
  const box = buildMailbox({ corpus, work, name: size, count: SIZES[size], log });
  const base = citusSh(['url']);
  const results = [];
  for (const cfg of configs) results.push(await runConfig(cfg, base, box, log));
  const data = {
    size,
    messagesPerImporter: SIZES[size],
    command: `npm run citus:import-bench -- ${args.join(' ')}`.trim(),
    date: new Date().toISOString(),
    machine: {
      ...machineFacts({ work }),
      postgres: 'PostgreSQL 15 with Citus 12.1.12 (scripts/citus/citus.sh), fsync on',
    },
    results,
  };
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, 'import.json'), JSON.stringify(data, null, 2) + '\n');
  fs.writeFileSync(path.join(out, 'import.md'), markdown(data));
  log(`wrote ${path.join(out, 'import.json')} and import.md`);
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((err) => {
    process.stderr.write(`${err.code || 'IMPORT_BENCH_FAILED'}: ${err.message}\n`);
    process.exitCode = err.code === 'USAGE' ? 2 : 1;
  });
}

module.exports = { markdown };
