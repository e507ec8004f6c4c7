'use strict';

const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const { spawn } = require('node:child_process');

/*
 * A whole server to migrate (issue 33): the Enron accounts of the shared corpus as Maildir++
 * trees (one per user, folders as `.sub` folders, hard links to the corpus files), served by one
 * real Dovecot with a passwd-file of every account; `mailgate migrate --worker` processes
 * spawned against it; CPU time of a process tree read from /proc. Used by the fleet test (20
 * accounts, CI) and `mailgate-bench fleet` / scripts (all 137). Owns no assertion: callers
 * decide what a run must show.
 */

const CLI = path.join(__dirname, '..', '..', 'cli', 'bin', 'mailgate.js');

/** The users of the corpus's Enron maildir root, sorted. */
function enronUsers(root) {
  return fs
    .readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

const byNumber = (a, b) => {
  const na = parseInt(a, 10);
  const nb = parseInt(b, 10);
  return Number.isNaN(na) || Number.isNaN(nb) ? (a < b ? -1 : a > b ? 1 : 0) : na - nb;
};

/**
 * Builds (once; a `.complete` marker says it is whole) the Maildir++ tree of one Enron user:
 * `<root>/<user>/inbox/N` → `cur/`, `inbox/<a>/<b>/N` → `.a.b/cur/`; file names
 * `<time>.M<n>P1.enron:2,` (no flags), files hard-linked to the corpus.
 * @param {string} root the corpus's enron/maildir
 * @param {string} user
 * @param {string} out folder of all trees
 * @returns {{user: string, maildir: string, messages: number, bytes: number,
 *   folders: Record<string, number>}}
 */
function buildUserMaildir(root, user, out) {
  const md = path.join(out, user);
  const manifest = path.join(out, `${user}.json`);
  if (fs.existsSync(manifest)) return JSON.parse(fs.readFileSync(manifest, 'utf8'));
  fs.rmSync(md, { recursive: true, force: true });
  const r = { user, maildir: md, messages: 0, bytes: 0, folders: {} };
  let n = 0;
  const walk = (dir, folder) => {
    const target = folder.length ? path.join(md, `.${folder.join('.')}`) : md;
    for (const sub of ['cur', 'new', 'tmp'])
      fs.mkdirSync(path.join(target, sub), { recursive: true });
    const name = folder.length ? folder.join('/') : 'INBOX';
    r.folders[name] = 0;
    for (const e of fs
      .readdirSync(dir, { withFileTypes: true })
      .sort((a, b) => byNumber(a.name, b.name))) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p, [...folder, e.name.replace(/\./g, '_')]);
      else if (e.isFile()) {
        const st = fs.statSync(p);
        if (!st.size) continue;
        n++;
        fs.linkSync(p, path.join(target, 'cur', `${1000000000 + n}.M${n}P1.enron:2,`));
        r.folders[name]++;
        r.messages++;
        r.bytes += st.size;
      }
    }
  };
  walk(path.join(root, user, 'inbox'), []);
  fs.writeFileSync(manifest, JSON.stringify(r));
  return r;
}

/**
 * Starts one Dovecot serving the given Enron users (each with a random password).
 * @param {string} root
 * @param {string[]} users
 * @param {string} cache where the Maildir++ trees are kept between runs
 * @param {{lmtpPort?: number}} [opts] lmtpPort: Dovecot's LMTP listener too (relay target)
 * @returns {Promise<{inst: object, accounts: Array<{user: string, password: string,
 *   messages: number, bytes: number, folders: Record<string, number>}>,
 *   lmtpPort: number|null}>}
 */
async function startFleetDovecot(root, users, cache, opts = {}) {
  const dovecot = require('@mailgate/dovecot');
  fs.mkdirSync(cache, { recursive: true });
  const accounts = users.map((u) => ({
    ...buildUserMaildir(root, u, cache),
    password: crypto.randomBytes(9).toString('hex'),
  }));
  const inst = await dovecot.start({
    format: 'maildir',
    link: true,
    users: accounts.map((a) => ({ user: a.user, password: a.password, mail: a.maildir })),
    // The old server's delivery (dovecot-lmtpd), where proxied users' mail is relayed.
    ...(opts.lmtpPort ? { lmtpPort: opts.lmtpPort } : {}),
  });
  return { inst, accounts, lmtpPort: opts.lmtpPort || null };
}

/**
 * Writes an accounts file (CSV) for the accounts (`login`: the upstream login when it is not
 * the user's name; `relay`: where their mail goes until the cutover, e.g. `lmtp://…`, or none),
 * each password in a file of its own
 * (`password_file`): nothing secret in the accounts file or on a command line.
 * @returns {string} the accounts file's path
 */
function writeAccountsFile(dir, accounts, upstream, relay = '') {
  fs.mkdirSync(path.join(dir, 'pw'), { recursive: true, mode: 0o700 });
  const lines = ['user,host,port,login,password_file,security,relay'];
  for (const a of accounts) {
    const pw = path.join(dir, 'pw', a.user);
    fs.writeFileSync(pw, `${a.password}\n`, { mode: 0o600 });
    lines.push(
      `${a.user},${upstream.host},${upstream.port},${a.login || a.user},${pw},plaintext,${relay}`,
    );
  }
  const file = path.join(dir, 'accounts.csv');
  fs.writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

/**
 * Spawns `mailgate migrate --worker` (a process of its own, as on another machine).
 * @param {string[]} args more arguments (e.g. --concurrency, --until-done)
 * @param {NodeJS.ProcessEnv} env
 * @returns {import('node:child_process').ChildProcess & {done: Promise<{code: number|null, signal: string|null, stderr: string}>}}
 */
function spawnWorker(args, env) {
  const child = spawn(process.execPath, [CLI, 'migrate', '--worker', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  const log = process.env.MAILGATE_FLEET_WORKER_LOG;
  child.stderr.on('data', (d) => {
    stderr = (stderr + d).slice(-20000);
    // The workers' log lines, kept when asked (debugging a run).
    if (log) fs.appendFileSync(log, d);
  });
  child.stdout.resume();
  child.done = new Promise((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stderr })),
  );
  return child;
}

/**
 * CPU seconds (user + system) used so far by a process and its children that were waited for
 * (/proc/PID/stat utime, stime, cutime, cstime), or null when it is gone.
 * @param {number} pid
 */
function cpuSeconds(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    return ticks / 100; // USER_HZ is 100 on Linux
  } catch {
    return null;
  }
}

/**
 * CPU seconds of every running process whose command line matches `test` (e.g. all of one
 * Dovecot instance's processes, or a PostgreSQL cluster's backends), summed.
 * @param {(cmdline: string, comm: string) => boolean} test
 * @returns {{seconds: number, pids: number[]}}
 */
function cpuOfProcesses(test) {
  let seconds = 0;
  const pids = [];
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    let cmd;
    let comm;
    try {
      cmd = fs.readFileSync(`/proc/${e}/cmdline`, 'utf8').replace(/\0/g, ' ');
      comm = fs.readFileSync(`/proc/${e}/comm`, 'utf8').trim();
    } catch {
      continue;
    }
    if (!test(cmd, comm)) continue;
    const s = cpuSeconds(Number(e));
    if (s != null) {
      seconds += s;
      pids.push(Number(e));
    }
  }
  return { seconds, pids };
}

module.exports = {
  enronUsers,
  buildUserMaildir,
  startFleetDovecot,
  writeAccountsFile,
  spawnWorker,
  cpuSeconds,
  cpuOfProcesses,
  CLI,
};
