'use strict';

/*
 * IMAP IDLE memory benchmark (issue 12: "200 concurrent IDLE sessions under 300 MB RSS in
 * total"). mailgate's IMAP server runs in a process of its own (so its RSS is its own), on the
 * PostgreSQL of MAILGATE_HOME (or DATABASE_URL); N raw sessions each LOGIN, SELECT the same
 * mailbox and IDLE. Then another session changes a flag, which every idle session is told
 * about (one shared poll, one sync each), and later appends a message (EXISTS to everyone).
 * The server's VmRSS is sampled after the sessions are idle and after each change, VmHWM
 * (the peak) at the end. Sessions share one user: the per-user connection cap is raised to N,
 * which is the harder case (every view holds the whole mailbox's uids).
 *
 *   MAILGATE_HOME=… npm run bench:imap-idle -- --mbox FILE [--sessions 200] [--out FILE]
 *
 * The mailbox is imported once into user `idle-bench` (kept for re-runs).
 */

const fs = require('node:fs');
const { spawn } = require('node:child_process');
const { RawImapClient } = require('../raw-imap');
const { machineFacts } = require('../machine');
const { ROOT, run, option } = require('../command-kit');

const USER = 'idle-bench';
const PASSWORD = 'idle-bench-password';

// The server: mailgate's IMAP server alone, limits raised for one user's N sessions.
const serverSource = (sessions) => `
const { createMailService } = require('@mailgate/service');
const { createImapServer } = require('@mailgate/imap');
(async () => {
  const service = await createMailService({ env: process.env });
  const server = createImapServer({
    service,
    limits: { maxConnectionsPerUser: ${sessions + 5}, idlePollMs: 500 },
  });
  const { port } = await server.listen({ port: 0, host: '127.0.0.1' });
  process.send({ port });
  // Heap figures on request (after the sample's RSS is read): what the sessions retain.
  process.on('message', () => {
    const m = process.memoryUsage();
    const mb = (n) => +(n / 1048576).toFixed(1);
    process.send({ heapUsedMB: mb(m.heapUsed), heapTotalMB: mb(m.heapTotal), externalMB: mb(m.external) });
  });
})().catch((err) => { console.error(err); process.exit(1); });
`;

async function sample(child) {
  const t = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
  const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(t)[1]);
  const heap = await new Promise((resolve) => {
    child.once('message', resolve);
    child.send('mem');
  });
  return {
    rssMB: +(kb('VmRSS') / 1024).toFixed(1),
    peakMB: +(kb('VmHWM') / 1024).toFixed(1),
    ...heap,
  };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * `bench imap-idle`: see the file comment.
 * @param {string[]} args --mbox FILE, --sessions N, --out FILE
 */
async function main(args) {
  const SESSIONS = Number(option(args, '--sessions', 200));
  const MBOX = option(args, '--mbox', null);
  const OUT = option(args, '--out', null);
  const env = { ...process.env, LOG_LEVEL: 'silent', IDLE_BENCH_PW: PASSWORD };
  let created = false;
  try {
    run(['user', 'add', USER, '--password-env', 'IDLE_BENCH_PW'], env);
    created = true;
  } catch (err) {
    if (!/exist/i.test(err.message)) throw err; // kept from an earlier run
  }
  if (created) {
    if (!MBOX) throw new Error('--mbox FILE is needed for the first run (imported once)');
    run(['import', 'mbox', MBOX, '--user', USER, '--mailbox', 'INBOX', '--json'], env);
  }
  const child = spawn(process.execPath, ['-e', serverSource(SESSIONS)], {
    env,
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const { port } = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
  const base = await sample(child);
  const sessions = [];
  const result = { sessions: SESSIONS, samples: {} };
  try {
    for (let i = 0; i < SESSIONS; i++) {
      const c = new RawImapClient({ port });
      await c.connect();
      await c.login(USER, PASSWORD);
      const sel = await c.command('SELECT INBOX');
      if (i === 0) result.messages = sel.exists();
      sessions.push(c);
    }
    // IDLE: the continuation `+` is the answer to wait for (no tagged line until DONE).
    const idling = sessions.map((c) => startIdle(c));
    await Promise.all(idling.map((x) => x.ready));
    await sleep(1500);
    result.samples.idle = await sample(child);
    const admin = new RawImapClient({ port });
    await admin.connect();
    await admin.login(USER, PASSWORD);
    await admin.command('SELECT INBOX');
    await admin.command('STORE 1 +FLAGS (\\Flagged)');
    await Promise.all(idling.map((x) => x.until(/FETCH/)));
    result.samples.afterFlagChange = await sample(child);
    const msg = `From: idle@example.org\r\nSubject: idle bench ${Date.now()}\r\n\r\nhello\r\n`;
    await admin.command(`APPEND INBOX {${Buffer.byteLength(msg)}+}\r\n${msg}`);
    await Promise.all(idling.map((x) => x.until(/EXISTS/)));
    result.samples.afterAppend = await sample(child);
    await admin.command('STORE 1 -FLAGS (\\Flagged)');
    await admin.logout();
    result.samples.end = await sample(child);
    result.baseline = base;
    result.withinTarget = result.samples.end.peakMB < 300;
  } finally {
    for (const c of sessions) c.socket?.destroy();
    child.kill('SIGTERM');
  }
  const out = { machine: machineFacts({ work: ROOT }), ...result };
  const text = JSON.stringify(out, null, 2);
  if (OUT) fs.writeFileSync(OUT, text + '\n');
  process.stdout.write(text + '\n');
}

/** Sends IDLE and watches the session's untagged data without the command framer. */
function startIdle(c) {
  let seen = '';
  let waiters = [];
  const onData = (chunk) => {
    seen += chunk.toString('latin1');
    waiters = waiters.filter((w) => !w());
  };
  c.socket.on('data', onData);
  c.socket.write('I1 IDLE\r\n');
  const until = (re) =>
    new Promise((resolve) => {
      const check = () => {
        if (!re.test(seen)) return false;
        seen = '';
        resolve();
        return true;
      };
      if (!check()) waiters.push(check);
    });
  return { ready: until(/^\+ /m), until };
}

module.exports = {
  description: 'memory of N idling IMAP sessions of one user (mailgate alone)',
  usage: '--mbox FILE [--sessions 200] [--out FILE] (MAILGATE_HOME or DATABASE_URL)',
  run: main,
};
