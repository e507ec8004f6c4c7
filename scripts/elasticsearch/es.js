#!/usr/bin/env node
'use strict';

/*
 * Start, stop and check a real local single-node Elasticsearch (see README.md in this folder).
 *
 *   node scripts/elasticsearch/es.js start|stop|status
 *
 * A cluster of local nodes: ES_NODES=2 (see clusterNodes below; ES_NODE=n for one node).
 *
 * Environment: ES_PORT (http, 9200), ES_TRANSPORT_PORT (9300), ES_HOME (scratch dir, <repo>/.es),
 * ES_JAVA_OPTS (replaces the default "-Xms512m -Xmx512m"), ES_START_TIMEOUT (seconds, 120),
 * ES_STOP_TIMEOUT (seconds, 30).
 */

const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const net = require('node:net');
const { spawn, spawnSync } = require('node:child_process');

const PROJECT_DIR = __dirname;
const REPO_DIR = path.resolve(__dirname, '..', '..');
const MAIN_CLASS = 'org.elasticsearch.node.LocalElasticsearch';
const TARGET_DIR = path.join(PROJECT_DIR, 'target');
const CLASSPATH_FILE = path.join(TARGET_DIR, 'classpath.txt');
const STAMP_FILE = path.join(TARGET_DIR, 'build.stamp');

const PORT = intEnv('ES_PORT', 9200);
const TRANSPORT_PORT = intEnv('ES_TRANSPORT_PORT', 9300);
const ES_HOME = path.resolve(process.env.ES_HOME || path.join(REPO_DIR, '.es'));
const PID_FILE = path.join(ES_HOME, 'es.pid');
const LOG_FILE = path.join(ES_HOME, 'logs', 'es.log');
const START_TIMEOUT_MS = intEnv('ES_START_TIMEOUT', 120) * 1000;
const STOP_TIMEOUT_MS = intEnv('ES_STOP_TIMEOUT', 30) * 1000;
const URL_BASE = `http://127.0.0.1:${PORT}`;

class UsageError extends Error {}

function intEnv(name, dflt) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) {
    console.error(`es: ${name} must be a positive integer, got ${JSON.stringify(raw)}`);
    process.exit(2);
  }
  return n;
}

const log = (msg) => console.log(`es: ${msg}`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function requireTool(cmd, args, hint) {
  const r = spawnSync(cmd, args, { stdio: 'ignore' });
  if (r.error && r.error.code === 'ENOENT') {
    throw new UsageError(`\`${cmd}\` not found on PATH. ${hint}`);
  }
}

/* Hash of everything the build depends on: rebuild when the pom or the launcher changes. */
function sourceHash() {
  const h = crypto.createHash('sha256');
  const walk = (dir) => {
    for (const e of fs
      .readdirSync(dir, { withFileTypes: true })
      .sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else {
        h.update(path.relative(PROJECT_DIR, p));
        h.update(fs.readFileSync(p));
      }
    }
  };
  h.update(fs.readFileSync(path.join(PROJECT_DIR, 'pom.xml')));
  walk(path.join(PROJECT_DIR, 'src'));
  return h.digest('hex');
}

function buildIfNeeded() {
  const hash = sourceHash();
  const stamp = fs.existsSync(STAMP_FILE) ? fs.readFileSync(STAMP_FILE, 'utf8').trim() : '';
  if (stamp === hash && fs.existsSync(CLASSPATH_FILE)) return;
  requireTool(
    'mvn',
    ['-v'],
    'Install Maven 3.8+ (Debian/Ubuntu: apt-get install maven) to build the local node.',
  );
  log('building the launcher (mvn -q -B package; the first run downloads ~74 MB)...');
  const t0 = Date.now();
  // Output is captured (Maven 3.8 prints stray ANSI resets even with -q) and shown on failure.
  const r = spawnSync('mvn', ['-q', '-B', '-Dstyle.color=never', 'package'], {
    cwd: PROJECT_DIR,
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.error) throw r.error;
  // eslint-disable-next-line no-control-regex
  const output = `${r.stdout}${r.stderr}`.replace(/\x1b\[[0-9;]*m/g, '').trim();
  if (r.status !== 0) {
    throw new UsageError(`mvn package failed (exit ${r.status}):\n${output}`);
  }
  if (output) console.log(output);
  if (!fs.existsSync(CLASSPATH_FILE)) throw new UsageError(`mvn did not write ${CLASSPATH_FILE}`);
  fs.writeFileSync(STAMP_FILE, hash + '\n');
  log(`built in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

/* Process state from /proc: null (gone), 'zombie', or the command line. */
function procInfo(pid) {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    if (/^State:\s+Z/m.test(status)) return 'zombie';
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    // Not Linux, or no such process: fall back to signal 0.
    try {
      process.kill(pid, 0);
      return '';
    } catch {
      return null;
    }
  }
}

/* The pid from the pid file if that process is alive and is our launcher, else null. */
function runningPid() {
  let pid;
  try {
    pid = Number(fs.readFileSync(PID_FILE, 'utf8').trim());
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || pid <= 0) return null;
  const info = procInfo(pid);
  if (info === null || info === 'zombie') return null;
  if (info !== '' && !info.includes(MAIN_CLASS)) return null; // pid reused by something else
  return pid;
}

function rssMb(pid) {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

function portInUse(port) {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

async function health(waitSeconds) {
  const q = waitSeconds ? `?wait_for_status=yellow&timeout=${waitSeconds}s` : '';
  try {
    const res = await fetch(`${URL_BASE}/_cluster/health${q}`, {
      signal: AbortSignal.timeout((waitSeconds || 2) * 1000 + 3000),
    });
    if (!res.ok) return null;
    return await res.json();
  } catch {
    return null;
  }
}

function logTail(lines = 40) {
  try {
    const text = fs.readFileSync(LOG_FILE, 'utf8').trimEnd().split('\n');
    return text
      .slice(-lines)
      .map((l) => (l.length > 500 ? `${l.slice(0, 500)}…` : l))
      .join('\n');
  } catch {
    return '(no log)';
  }
}

async function waitForExit(pid, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const info = procInfo(pid);
    if (info === null || info === 'zombie') return true;
    await sleep(200);
  }
  return false;
}

async function killPid(pid) {
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  if (await waitForExit(pid, STOP_TIMEOUT_MS)) return;
  log(`pid ${pid} did not exit within ${STOP_TIMEOUT_MS / 1000} s; sending SIGKILL`);
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return;
  }
  await waitForExit(pid, 10000);
}

async function start() {
  const existing = runningPid();
  if (existing) {
    const h = await health(0);
    log(
      `already running (pid ${existing}) at ${URL_BASE}` +
        (h ? `, status ${h.status}` : ' (not answering health yet)'),
    );
    return 0;
  }
  fs.rmSync(PID_FILE, { force: true });

  requireTool(
    'java',
    ['-version'],
    'Install a JDK 17+ (Debian/Ubuntu: apt-get install default-jdk-headless) to run the local node.',
  );
  buildIfNeeded();

  for (const p of [PORT, TRANSPORT_PORT]) {
    if (await portInUse(p)) {
      throw new UsageError(
        `port ${p} on 127.0.0.1 is already in use by another process (set ES_PORT / ES_TRANSPORT_PORT)`,
      );
    }
  }

  fs.mkdirSync(path.dirname(LOG_FILE), { recursive: true });
  const classpath = [
    path.join(TARGET_DIR, 'classes'),
    fs.readFileSync(CLASSPATH_FILE, 'utf8').trim(),
  ].join(path.delimiter);
  const javaOpts = (process.env.ES_JAVA_OPTS || '-Xms512m -Xmx512m').split(/\s+/).filter(Boolean);
  if (fs.existsSync(LOG_FILE)) fs.renameSync(LOG_FILE, `${LOG_FILE}.1`); // keep one previous log
  const out = fs.openSync(LOG_FILE, 'w');
  const t0 = Date.now();
  const child = spawn('java', [...javaOpts, '-cp', classpath, MAIN_CLASS], {
    cwd: ES_HOME,
    detached: true,
    stdio: ['ignore', out, out],
    env: {
      ...process.env,
      ES_HOME,
      ES_PORT: String(PORT),
      ES_TRANSPORT_PORT: String(TRANSPORT_PORT),
    },
  });
  fs.closeSync(out);
  let exited = null;
  child.once('exit', (code, signal) => {
    exited = signal || `exit ${code}`;
  });
  child.unref();
  fs.writeFileSync(PID_FILE, `${child.pid}\n`);
  log(`starting pid ${child.pid} on ${URL_BASE} (home ${ES_HOME}, log ${LOG_FILE})`);

  const deadline = t0 + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exited) break;
    const h = await health(Math.min(5, Math.max(1, Math.ceil((deadline - Date.now()) / 1000))));
    if (h && !h.timed_out && (h.status === 'green' || h.status === 'yellow')) {
      const rss = rssMb(child.pid);
      log(
        `healthy (${h.status}) in ${((Date.now() - t0) / 1000).toFixed(1)} s` +
          (rss ? `, RSS ${rss} MB` : ''),
      );
      return 0;
    }
    if (exited) break;
    await sleep(500);
  }

  const why = exited
    ? `the node exited (${exited})`
    : `not healthy after ${START_TIMEOUT_MS / 1000} s`;
  console.error(`es: start failed: ${why}. Last lines of ${LOG_FILE}:\n${logTail()}`);
  if (!exited) await killPid(child.pid);
  fs.rmSync(PID_FILE, { force: true });
  return 1;
}

async function stop() {
  const pid = runningPid();
  if (!pid) {
    fs.rmSync(PID_FILE, { force: true });
    log('not running');
    return 0;
  }
  log(`stopping pid ${pid}...`);
  const t0 = Date.now();
  await killPid(pid);
  const info = procInfo(pid);
  if (info !== null && info !== 'zombie') {
    console.error(`es: pid ${pid} is still running`);
    return 1;
  }
  fs.rmSync(PID_FILE, { force: true });
  log(`stopped in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return 0;
}

async function status() {
  const pid = runningPid();
  if (!pid) {
    log('not running');
    return 3;
  }
  const h = await health(0);
  const rss = rssMb(pid);
  log(
    `running (pid ${pid}) at ${URL_BASE}, ` +
      (h ? `status ${h.status}` : 'not answering health') +
      (rss ? `, RSS ${rss} MB` : ''),
  );
  return h ? 0 : 1;
}

/*
 * A cluster of local nodes (issue 34.5): ES_NODES=2 runs this script once per node with that
 * node's environment. Node 1 is master-eligible and holds data; the others hold data only, so
 * stopping one of them leaves the cluster up (two master-eligible nodes could not lose either:
 * a cluster that survives losing any node needs three). Own ports (HTTP 9210+, transport
 * 9310+), never the dev node's 9200 or CI's 9201; homes <ES_HOME>/node-N; heaps 256 MB each
 * unless ES_JAVA_OPTS says otherwise. ES_NODE=N limits a command to node N (stop one node,
 * start it again).
 */
function clusterNodes(count) {
  const httpBase = intEnv('ES_PORT', 9210);
  const transportBase = intEnv('ES_TRANSPORT_PORT', 9310);
  const home = path.resolve(process.env.ES_HOME || path.join(REPO_DIR, '.es-cluster'));
  const seeds = Array.from({ length: count }, (_, i) => `127.0.0.1:${transportBase + i}`);
  return Array.from({ length: count }, (_, i) => ({
    n: i + 1,
    env: {
      ES_NODES: '',
      ES_PORT: String(httpBase + i),
      ES_TRANSPORT_PORT: String(transportBase + i),
      ES_HOME: path.join(home, `node-${i + 1}`),
      ES_NODE_NAME: `mailgate-node-${i + 1}`,
      ES_CLUSTER_NAME: process.env.ES_CLUSTER_NAME || 'mailgate-cluster',
      ES_SEED_HOSTS: seeds.join(','),
      ES_INITIAL_MASTER_NODES: 'mailgate-node-1',
      ES_NODE_ROLES: i === 0 ? '' : 'data,ingest',
      ES_JAVA_OPTS: process.env.ES_JAVA_OPTS || '-Xms256m -Xmx256m',
    },
  }));
}

/** Runs a command on each node of the cluster (in order; stop in reverse order). */
function clusterCommand(cmd, count) {
  let nodes = clusterNodes(count);
  if (process.env.ES_NODE) nodes = nodes.filter((x) => String(x.n) === process.env.ES_NODE);
  if (!nodes.length) throw new UsageError(`ES_NODE must be 1..${count}`);
  if (cmd === 'stop') nodes.reverse();
  let rc = 0;
  for (const node of nodes) {
    const r = spawnSync(process.execPath, [__filename, cmd], {
      stdio: 'inherit',
      env: { ...process.env, ...node.env, ES_NODE: '' },
    });
    rc = Math.max(rc, r.status === null ? 1 : r.status);
    if (cmd === 'start' && r.status !== 0) break;
  }
  return rc;
}

async function main(argv) {
  const commands = { start, stop, status };
  const cmd = commands[argv[0]];
  if (!cmd || argv.length !== 1) {
    console.error(
      'usage: [ES_NODES=2 [ES_NODE=n]] node scripts/elasticsearch/es.js start|stop|status',
    );
    return 2;
  }
  const nodes = process.env.ES_NODES ? intEnv('ES_NODES', 1) : 1;
  if (nodes > 1) return clusterCommand(argv[0], nodes);
  return cmd();
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      console.error(`es: ${err instanceof UsageError ? err.message : err.stack || err}`);
      process.exitCode = 1;
    },
  );
}

module.exports = { main };
