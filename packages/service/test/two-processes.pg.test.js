'use strict';

/*
 * Several mailgate processes on one database (issue 34.4), with real child processes and real
 * sockets: two `mailgate serve` (A and B, their own HTTP and IMAP ports) on one PostgreSQL,
 * and an import in a third process meanwhile.
 * - a change through A (IMAP APPEND, HTTP flags) reaches an IDLE session on B by PostgreSQL
 *   LISTEN/NOTIFY (B's IDLE poll is set to 60 s, longer than the test waits), B's changes
 *   feed and B's list cache (no stale list after B served the mailbox once);
 * - the failed-login limiter counts across processes: a guesser taking turns between A and
 *   B is refused after the same 10 failures as on one process, a success on one clears the
 *   count on the other, and correct logins spread over both are never refused;
 * - with Elasticsearch (ELASTICSEARCH_URL; required in CI): both processes run the outbox
 *   worker and the purge at once while an import runs in a third process and expunges go
 *   through both: the outbox drains, ES holds exactly the visible rows (`mailgate es verify`
 *   clean, document count = row count), and the hidden rows are purged.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const { spawn } = require('node:child_process');
const {
  createTestDatabase,
  runCli,
  spawnCli,
  stderrMatch,
  CLI,
} = require('@mailgate/test-support/db');
const { msg, mboxOf } = require('@mailgate/test-support/mail');
const { esUnavailableReason } = require('@mailgate/test-support/es');
const { skipOutsideCI } = require('@mailgate/test-support/skip');
const { RawClient } = require('../../imap/test/raw-client');

const PASSWORD = 'two processes pw';
const USERS = ['ann', 'bob', 'cat', 'dan'];

let db;
let tmp;
let esReason;
const es = {
  url: process.env.ELASTICSEARCH_URL,
  prefix: `mgt-2p-${crypto.randomBytes(4).toString('hex')}`,
};
const procs = {};

/** Starts `mailgate serve` on free ports; resolves with its HTTP base URL and IMAP port. */
async function startServe(name, extra = {}) {
  const env = {
    PORT: '0',
    HOST: '127.0.0.1',
    IMAP_PORT: '0',
    IMAP_HOST: '127.0.0.1',
    MAILGATE_HOME: path.join(tmp, name),
    ...(esReason ? { ELASTICSEARCH_URL: '' } : { ELASTICSEARCH_URL: es.url }),
    MAILGATE_ES_PREFIX: es.prefix,
    ...(process.env.MG_DEBUG ? { LOG_LEVEL: 'warn' } : {}),
    ...extra,
  };
  fs.mkdirSync(env.MAILGATE_HOME, { recursive: true });
  const child = spawnCli(['serve'], { url: db.url, env });
  child.stderr.on('data', (d) => {
    if (process.env.MG_DEBUG) process.stdout.write(`[${name}] ${d}`);
  });
  const [api, imap] = await Promise.all([
    stderrMatch(child, /API listening on (http:\/\/[^\s]+) /),
    stderrMatch(child, /IMAP listening on imap:\/\/[^:]+:(\d+)/),
  ]);
  return { child, base: `${api[1]}/api/v1`, imapPort: Number(imap[1]) };
}

/** One HTTP request; resolves with {status, body}. */
async function http(p, method, route, { token, body } = {}) {
  const headers = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body) headers['content-type'] = 'application/json';
  const res = await fetch(p.base + route, {
    method,
    headers,
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, body: json };
}

const login = (p, user, password) =>
  http(p, 'POST', '/session', { body: { user, password } }).then((r) => r.status);

async function tokenOf(p, user) {
  const r = await http(p, 'POST', '/session', { body: { user, password: PASSWORD } });
  expect(r.status).toBe(201);
  return r.body.token;
}

/** IMAP APPEND of one message (LITERAL+) on an open, logged-in client. */
async function append(c, tag, mailbox, bytes) {
  const r = await c.cmd(tag, `APPEND ${mailbox} {${bytes.length}+}\r\n${bytes.toString('latin1')}`);
  expect(r).toMatch(new RegExp(`^${tag} OK`, 'm'));
}

async function imapLogin(p, user) {
  const c = await RawClient.connect(p.imapPort);
  expect(await c.cmd('l', `LOGIN ${user} "${PASSWORD}"`)).toMatch(/^l OK/m);
  return c;
}

beforeAll(async () => {
  esReason = await esUnavailableReason();
  db = await createTestDatabase();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mailgate-2p-'));
  for (const u of USERS) {
    const r = runCli(['user', 'add', u, '--password-env', 'PW'], {
      url: db.url,
      env: { PW: PASSWORD },
    });
    expect(r.code).toBe(0);
  }
  // B's IDLE poll is longer than any wait below: what B's sessions learn, they learn by push.
  [procs.a, procs.b] = await Promise.all([
    startServe('a'),
    startServe('b', { IMAP_IDLE_POLL_MS: '60000' }),
  ]);
});

afterAll(async () => {
  for (const p of Object.values(procs)) {
    if (p.child.exitCode !== null) continue;
    const exited = new Promise((resolve) => p.child.once('exit', resolve));
    p.child.kill('SIGTERM');
    await exited;
  }
  if (!esReason) {
    await fetch(`${es.url}/${es.prefix}-*?ignore_unavailable=true&allow_no_indices=true`, {
      method: 'DELETE',
    }).catch(() => {});
  }
  if (db) await db.drop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

test('a change through A reaches an IDLE session, the changes feed and the list of B', async () => {
  const { a, b } = procs;
  const tokenB = await tokenOf(b, 'ann');
  const idler = await imapLogin(b, 'ann');
  expect(await idler.cmd('s', 'SELECT INBOX')).toMatch(/^\* 0 EXISTS/m);
  idler.write('i IDLE\r\n');
  await idler.waitFor(/^\+ [^\r]*\r\n/m);

  // APPEND through A's IMAP server: B's idling session is told at once (not by its poll).
  const writer = await imapLogin(a, 'ann');
  await append(writer, 'w1', 'INBOX', msg({ subject: 'through A' }));
  expect(await idler.waitFor(/^\* 1 EXISTS\r\n/m, 20000)).toMatch(/\* 1 EXISTS/);

  // B serves the list once: its list cache holds the mailbox from now on.
  const list0 = await http(b, 'GET', '/mailboxes/INBOX/messages?limit=50', { token: tokenB });
  expect(list0.status).toBe(200);
  expect(list0.body.messages.map((r) => [r.uid, r.flags])).toEqual([[1, []]]);

  // A flag change through A's HTTP API: an untagged FETCH FLAGS on B.
  const tokenA = await tokenOf(a, 'ann');
  const f = await http(a, 'POST', '/mailboxes/INBOX/flags', {
    token: tokenA,
    body: { uids: [1], add: ['\\Flagged'] },
  });
  expect(f.status).toBe(200);
  expect(await idler.waitFor(/^\* 1 FETCH \([^\r]*\\Flagged[^\r]*\)\r\n/m, 20000)).toBeTruthy();
  idler.write('DONE\r\n');
  await idler.waitFor(/^i OK/m);

  // B's changes feed names the message with its new flag.
  const changes = await http(b, 'GET', '/mailboxes/INBOX/changes?since=0', { token: tokenB });
  expect(changes.status).toBe(200);
  expect(JSON.stringify(changes.body)).toMatch(/Flagged/);

  // B's list is not stale: the row A added, with the flag A set; then a second APPEND
  // through A and B's list has both.
  const list1 = await http(b, 'GET', '/mailboxes/INBOX/messages?limit=50', { token: tokenB });
  expect(list1.status).toBe(200);
  const rows1 = list1.body.messages;
  expect(rows1.map((r) => [r.uid, r.subject, r.flags.includes('\\Flagged')])).toEqual([
    [1, 'through A', true],
  ]);
  await append(writer, 'w2', 'INBOX', msg({ subject: 'second through A' }));
  const list2 = await http(b, 'GET', '/mailboxes/INBOX/messages?limit=50', { token: tokenB });
  expect(list2.body.messages.map((r) => r.uid).sort()).toEqual([1, 2]);
  idler.close();
  writer.close();
});

test('a guesser taking turns between A and B is refused after 10 failures, as on one', async () => {
  const { a, b } = procs;
  // 10 failures allowed per user and address (LoginLimiter default), spread over both.
  const answers = [];
  for (let i = 0; i < 10; i++) answers.push(await login(i % 2 ? b : a, 'bob', 'wrong'));
  expect(answers).toEqual(Array(10).fill(401));
  // The 11th is refused on either process, by HTTP and by IMAP alike; with counts in each
  // process's memory, each would still allow 5 more.
  expect(await login(a, 'bob', 'wrong')).toBe(429);
  expect(await login(b, 'bob', 'wrong')).toBe(429);
  const c = await RawClient.connect(b.imapPort);
  expect(await c.cmd('x', 'LOGIN bob wrong')).toMatch(/^x NO/m);
  c.close();
});

test('a success on one process clears the count the other sees', async () => {
  const { a, b } = procs;
  for (let i = 0; i < 9; i++) expect(await login(i % 2 ? a : b, 'cat', 'wrong')).toBe(401);
  expect(await login(b, 'cat', PASSWORD)).toBe(201);
  // Counted from zero again on A too: 9 more failures are answered 401, not 429.
  for (let i = 0; i < 9; i++) expect(await login(a, 'cat', 'wrong')).toBe(401);
});

test('correct logins spread over both processes are never refused', async () => {
  const { a, b } = procs;
  const all = await Promise.all(
    Array.from({ length: 20 }, (_, i) => login(i % 2 ? a : b, 'dan', PASSWORD)),
  );
  expect(all).toEqual(Array(20).fill(201));
});

describe('outbox worker and purge in both processes, an import in a third', () => {
  test('ES holds exactly the visible rows; hidden rows are purged', async () => {
    if (skipOutsideCI(__filename, esReason, 'outbox and purge')) return;
    const { a, b } = procs;
    // The third process: an import of 400 messages into another mailbox of ann.
    const file = path.join(tmp, 'bulk.mbox');
    fs.writeFileSync(
      file,
      mboxOf(Array.from({ length: 400 }, (_, i) => msg({ subject: `bulk ${i}` }))),
    );
    const importer = spawn(
      process.execPath,
      [CLI, 'import', 'mbox', file, '--user', 'ann', '--mailbox', 'Bulk', '--json'],
      {
        env: {
          ...process.env,
          DATABASE_URL: db.url,
          LOG_LEVEL: 'error',
          ELASTICSEARCH_URL: es.url,
          MAILGATE_ES_PREFIX: es.prefix,
          MAILGATE_HOME: path.join(tmp, 'importer'),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    importer.stdout.on('data', (d) => (out += d));
    const imported = new Promise((resolve) => importer.once('exit', resolve));

    // Meanwhile, writes through both servers into INBOX.
    const ca = await imapLogin(a, 'ann');
    const cb = await imapLogin(b, 'ann');
    for (let i = 0; i < 20; i++) {
      await append(i % 2 ? cb : ca, `p${i}`, 'INBOX', msg({ subject: `during import ${i}` }));
    }
    expect(await imported).toBe(0);
    expect(JSON.parse(out.trim().split('\n').pop())).toMatchObject({ imported: 400 });

    // Expunges through both processes at once (every 5th message of Bulk on A, every 7th on
    // B): each process's purge runs while the other's does.
    const [ta, tb] = [await tokenOf(a, 'ann'), await tokenOf(b, 'ann')];
    const every = (n) => Array.from({ length: 400 }, (_, i) => i + 1).filter((u) => u % n === 0);
    const expunge = (p, token, uids) =>
      http(p, 'POST', '/mailboxes/Bulk/expunge', { token, body: { uids } });
    const flag = (p, token, uids) =>
      http(p, 'POST', '/mailboxes/Bulk/flags', { token, body: { uids, add: ['\\Deleted'] } });
    await Promise.all([flag(a, ta, every(5)), flag(b, tb, every(7))]);
    const [ea, eb] = await Promise.all([expunge(a, ta, every(5)), expunge(b, tb, every(7))]);
    expect([ea.status, eb.status]).toEqual([200, 200]);
    const gone = new Set([...every(5), ...every(7)]);

    // Both workers drain the outbox; every hidden row is purged.
    const deadline = Date.now() + 90000;
    let state;
    for (;;) {
      state = (
        await db.knex.raw(`SELECT
          (SELECT count(*)::int FROM es_outbox) AS outbox,
          (SELECT count(*)::int FROM messages WHERE expunged) AS hidden,
          (SELECT count(*)::int FROM messages m JOIN users u ON u.id = m.user_id
            WHERE u.name = 'ann' AND NOT m.expunged) AS visible`)
      ).rows[0];
      if ((state.outbox === 0 && state.hidden === 0) || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(state).toEqual({ outbox: 0, hidden: 0, visible: 2 + 20 + 400 - gone.size });

    const v = runCli(['es', 'verify', '--user', 'ann', '--json'], {
      url: db.url,
      env: { ELASTICSEARCH_URL: es.url, MAILGATE_ES_PREFIX: es.prefix },
    });
    expect(v.code).toBe(0);
    expect(v.json).toMatchObject({ ok: true, pending: 0 });
    await fetch(`${es.url}/${es.prefix}-*/_refresh`, { method: 'POST' });
    const count = await (await fetch(`${es.url}/${es.prefix}-*/_count`)).json();
    expect(count.count).toBe(state.visible);
    ca.close();
    cb.close();
  });
});
