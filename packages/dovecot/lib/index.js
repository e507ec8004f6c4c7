'use strict';

/**
 * @mailgate/dovecot — start and stop a real Dovecot IMAP server on loopback serving an mbox file
 * or a Maildir for one user, everything (config, sockets, state, log, the user's home) in a
 * scratch dir. Used by the benchmark (`mailgate bench`), the legacy-backend tests and CI; the
 * command line is scripts/dovecot/dovecot.js. See README.md.
 *
 * API: installed(), start(opts) → instance with stop(), stop(dir), deliver(dir, raw, opts),
 * processes(dir), status(dir), imapClient(endpoint), withImapClient(endpoint, fn).
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const net = require('node:net');
const crypto = require('node:crypto');
const { spawn, spawnSync } = require('node:child_process');

const TEMPLATE = path.join(__dirname, 'dovecot.conf.tmpl');
const STATE_FILE = '.mailgate-dovecot.json';
const MAIL_UID = 5000; // mail processes refuse uid 0; any unprivileged uid works, no user needed
const LIBEXEC = process.env.DOVECOT_LIBEXEC || '/usr/lib/dovecot';
const INSTALL_HINT =
  'install with: apt-get install dovecot-imapd (or: bash scripts/dovecot/install.sh)';
// UNIX socket paths are limited to 108 bytes; the longest one Dovecot makes under base_dir is
// about 30 bytes ("login/imap-urlauth-login" and the like).
const MAX_BASE_DIR = 76;

class DovecotError extends Error {}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/*
 * Full-text search with Debian's dovecot-fts-xapian (issue 35 item 2): the index a Dovecot
 * admin runs for TEXT/BODY searches. partial=3 full=20 indexes every 3..20-letter substring of
 * words, so SEARCH TEXT keeps IMAP's substring semantics; fts_autoindex indexes appended and
 * delivered mail as it arrives; fts_enforced answers from the index only (never a slow scan
 * behind the client's back).
 */
const FTS_CONF = `
mail_plugins = $mail_plugins fts fts_xapian
plugin {
  fts = xapian
  fts_xapian = partial=3 full=20 verbose=0
  fts_autoindex = yes
  fts_enforced = yes
}
`;

/* Absolute path of an executable from PATH (plus the sbin dirs a non-login PATH may lack). */
function which(name) {
  const dirs = (process.env.PATH || '').split(path.delimiter).filter(Boolean);
  for (const d of [...dirs, '/usr/sbin', '/usr/bin', '/sbin', '/bin']) {
    const p = path.join(d, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      // next
    }
  }
  return null;
}

/** @returns {boolean} true when dovecot, doveadm, the imap binary and dovecot-lda are there. */
function installed() {
  return Boolean(
    which('dovecot') &&
    which('doveadm') &&
    fs.existsSync(path.join(LIBEXEC, 'imap')) &&
    fs.existsSync(path.join(LIBEXEC, 'dovecot-lda')),
  );
}

function requireInstalled() {
  if (!which('dovecot') || !which('doveadm')) {
    throw new DovecotError(`dovecot is not installed; ${INSTALL_HINT}`);
  }
  if (!fs.existsSync(path.join(LIBEXEC, 'imap'))) {
    throw new DovecotError(`the Dovecot IMAP server is not installed; ${INSTALL_HINT}`);
  }
}

/**
 * A loopback port nobody listens on right now: the kernel's pick (a tiny race until the caller
 * binds it). Exported because the bench and the Postfix test helper start servers beside Dovecot.
 * @returns {Promise<number>}
 */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function groupId(name) {
  try {
    const line = fs
      .readFileSync('/etc/group', 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${name}:`));
    return line ? Number(line.split(':')[2]) : null;
  } catch {
    return null;
  }
}

function chownTree(p, uid, gid) {
  const st = fs.lstatSync(p);
  fs.lchownSync(p, uid, gid);
  if (st.isDirectory()) for (const e of fs.readdirSync(p)) chownTree(path.join(p, e), uid, gid);
}

/*
 * Maildir tree by hard links: world-readable files are linked (Dovecot never rewrites a message
 * file, it renames or unlinks it, which only touches our link), others are copied. Linked files
 * keep their owner, so the source is never chowned; directories are new and chowned later.
 */
function linkTree(src, dst) {
  fs.mkdirSync(dst, { recursive: true });
  for (const e of fs.readdirSync(src, { withFileTypes: true })) {
    const s = path.join(src, e.name);
    const d = path.join(dst, e.name);
    if (e.isDirectory()) linkTree(s, d);
    else if (e.isFile()) {
      const st = fs.statSync(s);
      let linked = false;
      if (st.mode & 0o004) {
        try {
          fs.linkSync(s, d);
          linked = true;
        } catch {
          // other filesystem, or links not allowed: copy
        }
      }
      if (!linked) {
        fs.copyFileSync(s, d);
        fs.utimesSync(d, st.atime, st.mtime);
      }
    }
  }
}

/* Files we own under dir (everything except hard-linked message files) go to uid:gid. */
function chownOwn(p, uid, gid) {
  const st = fs.lstatSync(p);
  if (st.isDirectory()) {
    fs.lchownSync(p, uid, gid);
    for (const e of fs.readdirSync(p)) chownOwn(path.join(p, e), uid, gid);
  } else if (st.nlink === 1) fs.lchownSync(p, uid, gid);
}

function render(vars) {
  return fs.readFileSync(TEMPLATE, 'utf8').replace(/\{\{([A-Z_]+)\}\}/g, (m, k) => {
    if (!(k in vars)) throw new DovecotError(`template variable ${k} has no value`);
    return String(vars[k]);
  });
}

function readState(dir) {
  const file = path.join(path.resolve(dir), STATE_FILE);
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    throw new DovecotError(`${dir} is not a dovecot scratch dir made by start() (no ${file})`);
  }
}

/* Process state from /proc: false when gone or a zombie. */
function alive(pid) {
  if (!pid) return false;
  try {
    return !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
}

function masterPid(dir) {
  try {
    const pid = Number(fs.readFileSync(path.join(dir, 'run', 'master.pid'), 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** Live pids of an instance: its master and every descendant (imap, auth, log, ...). */
function processes(dir) {
  dir = path.resolve(dir);
  const root = masterPid(dir) || readStateQuiet(dir).pid;
  if (!root || !alive(root)) return [];
  const children = new Map();
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      // pid (comm) state ppid ...; comm may contain spaces and parens
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(e));
    } catch {
      // exited meanwhile
    }
  }
  const out = [];
  const walk = (pid) => {
    if (alive(pid)) out.push(pid);
    for (const c of children.get(pid) || []) walk(c);
  };
  walk(root);
  return out;
}

function readStateQuiet(dir) {
  try {
    return readState(dir);
  } catch {
    return {};
  }
}

function logTail(dir, lines = 25) {
  try {
    const text = fs.readFileSync(path.join(dir, 'dovecot.log'), 'utf8').trimEnd().split('\n');
    return text.slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/* Resolves once something on host:port sends an IMAP "* OK" greeting; rejects otherwise. */
function greeting(port, host = '127.0.0.1', timeoutMs = 2000) {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ port, host });
    let buf = '';
    const done = (err, line) => {
      sock.destroy();
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(line);
    };
    const timer = setTimeout(() => done(new Error('no greeting')), timeoutMs);
    sock.on('data', (d) => {
      buf += d.toString('latin1');
      const i = buf.indexOf('\n');
      if (i < 0) return;
      const line = buf.slice(0, i).trim();
      if (/^\* (OK|PREAUTH)\b/i.test(line)) done(null, line);
      else done(new Error(`unexpected greeting: ${line}`));
    });
    sock.on('error', (err) => done(err));
    sock.on('close', () => done(new Error('connection closed before the greeting')));
  });
}

/* Runs a command with output to a file (a daemonizing child must not hold our pipes open). */
function runToFile(cmd, args, outFile, input) {
  const fd = fs.openSync(outFile, 'w');
  try {
    const r = spawnSync(cmd, args, { stdio: [input ? 'pipe' : 'ignore', fd, fd], input });
    if (r.error) throw r.error;
    return { status: r.status, signal: r.signal, output: fs.readFileSync(outFile, 'utf8').trim() };
  } finally {
    fs.closeSync(fd);
  }
}

function prepareHome(dir, { format, mail, user, link }) {
  const home = path.join(dir, 'home', user);
  fs.rmSync(home, { recursive: true, force: true });
  fs.mkdirSync(home, { recursive: true });
  if (format === 'mbox') {
    const mdir = path.join(home, 'mail');
    fs.mkdirSync(mdir);
    const inbox = path.join(mdir, 'inbox.mbox');
    if (mail) fs.cpSync(mail, inbox, { preserveTimestamps: true });
    else fs.writeFileSync(inbox, '');
    chownTree(home, MAIL_UID, MAIL_UID);
  } else {
    const md = path.join(home, 'Maildir');
    if (mail && link) linkTree(mail, md);
    else if (mail) fs.cpSync(mail, md, { recursive: true, preserveTimestamps: true });
    for (const sub of ['cur', 'new', 'tmp']) fs.mkdirSync(path.join(md, sub), { recursive: true });
    if (link) chownOwn(home, MAIL_UID, MAIL_UID);
    else chownTree(home, MAIL_UID, MAIL_UID);
  }
  return home;
}

/**
 * Starts a private Dovecot instance.
 * @param {{format: 'mbox'|'maildir', mail?: string, user?: string, password?: string,
 *   port?: number, dir?: string, link?: boolean, fts?: boolean, timeoutMs?: number,
 *   lmtpPort?: number, users?: Array<{user: string, password: string, mail?: string}>}} opts
 *   users: many accounts (each its own home and mail) instead of user/password/mail.
 *   mail: an mbox file (format mbox) or a Maildir directory (format maildir); omitted: empty INBOX.
 *   dir: scratch dir (created; default a new one under os.tmpdir(), removed again by stop()).
 *   link: hard-link the Maildir's message files instead of copying them.
 *   fts: full-text index with fts-xapian (FTS_CONF); index() builds it for the whole INBOX.
 *   lmtpPort: also run Dovecot's LMTP server (dovecot-lmtpd) on this loopback port.
 * @returns {Promise<{host: string, port: number, user: string, password: string, dir: string,
 *   conf: string, pid: number, format: string, home: string, log: string,
 *   stop: (o?: {keep?: boolean}) => Promise<void>}>}
 */
async function start(opts = {}) {
  const { format, user = 'alice', link = false } = opts;
  const timeoutMs = opts.timeoutMs || Number(process.env.DOVECOT_START_TIMEOUT || 20) * 1000;
  if (format !== 'mbox' && format !== 'maildir') {
    throw new DovecotError(`format must be 'mbox' or 'maildir', got ${JSON.stringify(format)}`);
  }
  const mail = opts.mail ? path.resolve(opts.mail) : null;
  if (mail) {
    let st;
    try {
      st = fs.statSync(mail);
    } catch {
      throw new DovecotError(`mail not found: ${mail}`);
    }
    if (format === 'mbox' && !st.isFile()) throw new DovecotError(`not an mbox file: ${mail}`);
    if (format === 'maildir' && !st.isDirectory()) {
      throw new DovecotError(`not a Maildir directory: ${mail}`);
    }
  }
  const password = opts.password ?? crypto.randomBytes(12).toString('hex');
  for (const a of opts.users || [{ user, password }]) {
    if (!/^[A-Za-z0-9._@+-]+$/.test(a.user)) throw new DovecotError(`bad user name: ${a.user}`);
    if (/[:\n\r]/.test(a.password) || !a.password) {
      throw new DovecotError('password must be non-empty without ":" or newlines');
    }
  }
  requireInstalled();
  if (process.getuid && process.getuid() !== 0) {
    throw new DovecotError('dovecot instances must be started as root (the mail uid is 5000)');
  }

  const created = !opts.dir;
  const dir = created ? fs.mkdtempSync(path.join(os.tmpdir(), 'dovecot-')) : path.resolve(opts.dir);
  if (path.join(dir, 'run').length > MAX_BASE_DIR) {
    throw new DovecotError(`scratch dir path too long for UNIX sockets (max ~70 chars): ${dir}`);
  }
  try {
    return await launch(dir, created, { ...opts, format, user, link, mail, password, timeoutMs });
  } catch (err) {
    // A scratch dir we made is removed again (the error carries the log tail).
    if (created) fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

async function launch(dir, created, opts) {
  const { format, user, link, mail, password, timeoutMs } = opts;
  fs.mkdirSync(dir, { recursive: true });
  const running = masterPid(dir);
  if (running && alive(running)) {
    throw new DovecotError(`a dovecot instance is already running in ${dir} (pid ${running})`);
  }
  fs.chmodSync(dir, 0o755); // the mail processes (uid 5000) must reach home/
  for (const sub of ['run', 'state']) fs.mkdirSync(path.join(dir, sub), { recursive: true });

  // One user (the default), or many (`users`: a whole server to migrate, issue 33).
  const accounts = (opts.users || [{ user, password, mail }]).map((a) => ({
    ...a,
    home: prepareHome(dir, { format, mail: a.mail, user: a.user, link }),
  }));
  const home = accounts[0].home;
  const usersFile = path.join(dir, 'users');
  fs.writeFileSync(
    usersFile,
    accounts
      .map((a) => `${a.user}:{PLAIN}${a.password}:${MAIL_UID}:${MAIL_UID}::${a.home}::\n`)
      .join(''),
    { mode: 0o640 },
  );
  fs.chmodSync(usersFile, 0o640);
  // The auth process runs as the "dovecot" user and reads the passwd-file itself.
  const gid = groupId('dovecot');
  if (gid !== null) fs.chownSync(usersFile, 0, gid);
  else fs.chmodSync(usersFile, 0o644);

  const conf = path.join(dir, 'dovecot.conf');
  const instance = `mailgate-${format}-${crypto.createHash('sha1').update(dir).digest('hex').slice(0, 10)}`;
  const location = format === 'mbox' ? 'mbox:~/mail:INBOX=~/mail/inbox.mbox' : 'maildir:~/Maildir';
  const dovecot = which('dovecot');

  let port = opts.port;
  let lastErr = null;
  for (let attempt = 0; attempt < (opts.port ? 1 : 3); attempt++) {
    if (!opts.port) port = await freePort();
    let text =
      render({ INSTANCE: instance, DIR: dir, UID: MAIL_UID, MAIL_LOCATION: location, PORT: port }) +
      (opts.fts ? FTS_CONF : '');
    // LMTP beside IMAP (the delivery benchmark): the recipient's local part is the user.
    if (opts.lmtpPort) text += lmtpConf(opts.lmtpPort);
    fs.writeFileSync(conf, text);
    const state = { dir, conf, port, user, password, format, home, created, instance, pid: null };
    fs.writeFileSync(path.join(dir, STATE_FILE), JSON.stringify(state, null, 2) + '\n', {
      mode: 0o600,
    });
    const logSize = fileSize(path.join(dir, 'dovecot.log'));
    const r = runToFile(dovecot, ['-c', conf], path.join(dir, 'start.out'));
    if (r.status !== 0) {
      lastErr = `dovecot -c ${conf} exited with ${r.status ?? r.signal}:\n${r.output}\n${logTail(dir)}`;
      if (/Address already in use/i.test(r.output + logSince(dir, logSize)) && !opts.port) continue;
      break;
    }
    const t0 = Date.now();
    let pid = null;
    while (Date.now() - t0 < timeoutMs) {
      pid = pid || masterPid(dir);
      if (pid && !alive(pid)) break;
      try {
        await greeting(port);
        state.pid = pid || masterPid(dir);
        fs.writeFileSync(path.join(dir, STATE_FILE), JSON.stringify(state, null, 2) + '\n');
        return {
          host: '127.0.0.1',
          port,
          user,
          password,
          dir,
          conf,
          pid: state.pid,
          format,
          home,
          log: path.join(dir, 'dovecot.log'),
          stop: (o) => stop(dir, o),
        };
      } catch {
        await sleep(50);
      }
    }
    const died = pid && !alive(pid);
    lastErr =
      `dovecot ${died ? 'exited' : `did not answer on 127.0.0.1:${port} within ${timeoutMs} ms`}` +
      `; log tail (${path.join(dir, 'dovecot.log')}):\n${logTail(dir)}`;
    await stop(dir, { keep: true }).catch(() => {});
    if (/Address already in use/i.test(logSince(dir, logSize)) && !opts.port) continue;
    break;
  }
  throw new DovecotError(lastErr);
}

/** The settings that add Dovecot's LMTP server on a loopback port (appended: later wins). */
function lmtpConf(port) {
  return `
protocols = imap lmtp
service lmtp {
  inet_listener lmtp {
    address = 127.0.0.1
    port = ${port}
  }
}
protocol lmtp {
  auth_username_format = %Ln
}
`;
}

function fileSize(p) {
  try {
    return fs.statSync(p).size;
  } catch {
    return 0;
  }
}

function logSince(dir, offset) {
  try {
    return fs.readFileSync(path.join(dir, 'dovecot.log')).subarray(offset).toString('utf8');
  } catch {
    return '';
  }
}

/**
 * Stops the instance in dir (SIGTERM to the master, as `doveadm stop` does, then SIGKILL of
 * whatever is left after timeoutMs) and waits until no process of it remains. Removes dir when
 * start() created it, unless keep is set.
 * @param {string} dir
 * @param {{keep?: boolean, timeoutMs?: number}} [o]
 */
async function stop(dir, o = {}) {
  dir = path.resolve(dir);
  const state = readState(dir);
  const timeoutMs = o.timeoutMs || 10000;
  let pids = processes(dir);
  if (pids.length) {
    // What `doveadm -c CONF stop` does, without its coarse polling (~2.5 s against ~1 s here).
    try {
      process.kill(pids[0], 'SIGTERM');
    } catch {
      // already gone
    }
    const t0 = Date.now();
    while (pids.some(alive) && Date.now() - t0 < timeoutMs) await sleep(50);
    const left = pids.filter(alive);
    for (const pid of left) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    const t1 = Date.now();
    while (left.some(alive) && Date.now() - t1 < 5000) await sleep(20);
    if (left.some(alive))
      throw new DovecotError(`dovecot processes survive: ${left.filter(alive)}`);
  }
  if (state.created && !o.keep) fs.rmSync(dir, { recursive: true, force: true });
}

/** CPU seconds used by this process's waited-for children so far (Linux /proc, else null). */
function childCpuSeconds() {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command's closing parenthesis; cutime and cstime are fields 16 and 17.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[13]) + Number(f[14])) / 100; // clock ticks (USER_HZ = 100 on Linux)
  } catch {
    return null;
  }
}

/** Bytes of the files under p (allocated blocks, as du counts them). */
function diskBytes(p) {
  let st;
  try {
    st = fs.lstatSync(p);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.blocks * 512;
  let n = st.blocks * 512;
  for (const e of fs.readdirSync(p)) n += diskBytes(path.join(p, e));
  return n;
}

/**
 * Builds the full-text index of a mailbox (`doveadm index`, run in the doveadm process itself,
 * not queued to the indexer), on an instance started with `fts: true`.
 * @param {string} dir the instance's scratch dir
 * @param {{mailbox?: string}} [o]
 * @returns {{seconds: number, cpuSeconds: number|null, indexBytes: number}} wall time, CPU
 *   time of doveadm (user + system), and the bytes of the xapian index afterwards
 */
function index(dir, o = {}) {
  const state = readState(dir);
  const cpu0 = childCpuSeconds();
  const t0 = process.hrtime.bigint();
  const r = spawnSync(
    which('doveadm'),
    ['-c', state.conf, 'index', '-u', state.user, o.mailbox || 'INBOX'],
    { encoding: 'utf8' },
  );
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0) {
    throw new DovecotError(`doveadm index failed (${r.status ?? r.signal}): ${r.stderr}`);
  }
  const cpu1 = childCpuSeconds();
  return {
    seconds,
    cpuSeconds: cpu0 === null || cpu1 === null ? null : cpu1 - cpu0,
    indexBytes: ftsIndexBytes(dir),
  };
}

/** Bytes of the fts-xapian index of the instance's user (its `xapian-indexes` folders). */
function ftsIndexBytes(dir) {
  const state = readState(dir);
  let n = 0;
  const walk = (p) => {
    let list;
    try {
      list = fs.readdirSync(p, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of list) {
      if (!e.isDirectory()) continue;
      const q = path.join(p, e.name);
      if (e.name === 'xapian-indexes') n += diskBytes(q);
      else if (e.name !== 'cur' && e.name !== 'new' && e.name !== 'tmp') walk(q);
    }
  };
  walk(state.home);
  return n;
}

/**
 * Stops an instance and starts it again on the same configuration, port and mail (an upstream
 * restart in the middle of a migration, issue 33): nothing is rebuilt or copied.
 * @param {string} dir
 * @param {{timeoutMs?: number}} [o]
 * @returns {Promise<void>} once it greets again
 */
async function restart(dir, o = {}) {
  dir = path.resolve(dir);
  const state = readState(dir);
  await stop(dir, { keep: true });
  const r = runToFile(which('dovecot'), ['-c', state.conf], path.join(dir, 'start.out'));
  if (r.status !== 0)
    throw new DovecotError(`dovecot restart failed: ${r.output}\n${logTail(dir)}`);
  const t0 = Date.now();
  for (;;) {
    try {
      await greeting(state.port);
      return;
    } catch (err) {
      if (Date.now() - t0 > (o.timeoutMs || 20000))
        throw new DovecotError(`no greeting after restart: ${err.message}`);
      await sleep(50);
    }
  }
}

/** @returns {{running: boolean, pids: number[], port: number, dir: string, conf: string}} */
function status(dir) {
  dir = path.resolve(dir);
  const state = readState(dir);
  const pids = processes(dir);
  return { running: pids.length > 0, pids, port: state.port, dir, conf: state.conf };
}

/**
 * Delivers one message into the user's mailbox with dovecot-lda (no MTA needed), like mail
 * arriving upstream. The instance must be running (LDA asks its auth process for the user).
 * @param {string} dir
 * @param {Buffer|string} raw RFC 5322 message
 * @param {{from?: string, mailbox?: string, user?: string, settings?: Record<string, string>}} [o]
 *   mailbox: default INBOX; settings: Dovecot settings for this delivery only (`-o key=value`,
 *   e.g. a short mbox_lock_timeout, so a lock it cannot break fails the delivery instead of
 *   making it wait)
 * @returns {Promise<void>}
 */
function deliver(dir, raw, o = {}) {
  const state = readState(dir);
  const lda = path.join(LIBEXEC, 'dovecot-lda');
  if (!fs.existsSync(lda))
    throw new DovecotError(`dovecot-lda not found at ${lda}; ${INSTALL_HINT}`);
  const args = ['-c', state.conf, '-d', o.user || state.user, '-f', o.from || 'sender@example.org'];
  if (o.mailbox) args.push('-m', o.mailbox);
  for (const [k, v] of Object.entries(o.settings || {})) args.push('-o', `${k}=${v}`);
  return new Promise((resolve, reject) => {
    const child = spawn(lda, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else {
        reject(
          new DovecotError(
            `dovecot-lda exited with ${code ?? signal}: ${out.trim()}\n${logTail(state.dir, 10)}`,
          ),
        );
      }
    });
    child.stdin.on('error', () => {}); // reported through 'close'
    child.stdin.end(Buffer.isBuffer(raw) ? raw : Buffer.from(raw));
  });
}

/* ---------------------------------------------------------------- CLI */

/**
 * An imapflow client logged in (plain text, loopback) to an instance or any endpoint of the
 * same shape, e.g. mailgate's own IMAP server in the benchmark.
 * @param {{host: string, port: number, user: string, password: string}} endpoint
 * @param {object} [opts] more ImapFlow options
 * @returns {Promise<import('imapflow').ImapFlow>}
 */
async function imapClient(endpoint, opts = {}) {
  const { ImapFlow } = require('imapflow');
  const client = new ImapFlow({
    host: endpoint.host,
    port: endpoint.port,
    secure: false,
    auth: { user: endpoint.user, pass: endpoint.password },
    logger: false,
    ...opts,
  });
  await client.connect();
  return client;
}

/**
 * Runs `fn` with a client of imapClient(endpoint, opts) and logs it out afterwards, whatever
 * `fn` did; resolves with what `fn` resolved with.
 * @template T
 * @param {{host: string, port: number, user: string, password: string}} endpoint
 * @param {(client: import('imapflow').ImapFlow) => Promise<T>} fn
 * @param {object} [opts] more ImapFlow options
 * @returns {Promise<T>}
 */
async function withImapClient(endpoint, fn, opts) {
  const client = await imapClient(endpoint, opts);
  try {
    return await fn(client);
  } finally {
    // A logout that fails (the connection already dropped) must not hide fn's own error.
    await client.logout().catch(() => client.close());
  }
}

module.exports = {
  installed,
  start,
  stop,
  restart,
  status,
  index,
  ftsIndexBytes,
  deliver,
  processes,
  imapClient,
  withImapClient,
  DovecotError,
  MAIL_UID,
  freePort,
};
