'use strict';

/*
 * New mail and flag changes reach an IDLE session through PostgreSQL LISTEN/NOTIFY (issue 28,
 * "Also"), whichever process committed them: here a second mail service with its own
 * connection pool, as the HTTP API, an LMTP server or an import in another process would be.
 * The server's fallback poll is set to ten minutes, so only the push can deliver in time; the
 * test asserts that the change arrives, not how fast.
 */

const Knex = require('knex');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { createMailService } = require('@mailgate/service');
const { msg } = require('@mailgate/test-support/mail');
const { startPgServer } = require('./helpers');
const { RawClient } = require('./raw-client');

let env;
let other;
let otherKnex;
let otherHome;
const PW = { erin: 'erin pw 1' };

beforeAll(async () => {
  env = await startPgServer({ users: PW, limits: { idlePollMs: 600000 } });
  const be = await env.service.openBackend('pg', 'erin');
  await be.createMailbox('INBOX');
  await be.append('INBOX', msg({ subject: 'before' }), {});
  await be.close();
  // "Another process": its own service, store and pool on the same database.
  otherKnex = Knex({ client: 'pg', connection: env.db.url, pool: { min: 0, max: 4 } });
  otherHome = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-imap-other-'));
  other = await createMailService({
    knex: otherKnex,
    env: { MAILGATE_HOME: otherHome, LOG_LEVEL: 'silent' },
  });
});

afterAll(async () => {
  if (other) await other.close();
  if (otherKnex) await otherKnex.destroy();
  if (otherHome) fs.rmSync(otherHome, { recursive: true, force: true });
  if (env) await env.close();
});

test('mail appended and flags changed by another service instance reach an IDLE session', async () => {
  const c = await RawClient.connect(env.port);
  await c.cmd('a', `LOGIN erin "${PW.erin}"`);
  await c.cmd('b', 'SELECT INBOX');
  c.write('c IDLE\r\n');
  await c.waitFor(/^\+ [^\r\n]*\r\n/m);
  // The first look of the shared watch happens at once (a push or a reset of the feed); give
  // the LISTEN its connection before committing, so this is the push and not that look.
  await env.service.store.mailboxChanges().ready();
  const be = await other.openBackend('pg', 'erin');
  await be.append('INBOX', msg({ subject: 'pushed' }), {});
  await c.waitFor(/^\* 2 EXISTS\r\n/m, 15000);
  await be.setFlags('INBOX', [1], ['\\Flagged'], []);
  await c.waitFor(/^\* 1 FETCH \([^\r\n]*\\Flagged/m, 15000);
  await be.close();
  c.write('DONE\r\n');
  await c.waitFor(/^c OK/m);
  c.close();
});

test('one LISTEN connection per process, whatever the number of idling sessions', async () => {
  const clients = [];
  for (let i = 0; i < 3; i++) {
    const c = await RawClient.connect(env.port);
    await c.cmd('a', `LOGIN erin "${PW.erin}"`);
    await c.cmd('b', 'SELECT INBOX');
    c.write('c IDLE\r\n');
    await c.waitFor(/^\+ [^\r\n]*\r\n/m);
    clients.push(c);
  }
  await env.service.store.mailboxChanges().ready();
  // The previous test's LISTEN connection was closed when its IDLE ended; its backend may
  // take a moment to leave pg_stat_activity.
  const listening = async () =>
    (
      await env.db.knex.raw(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND query ILIKE 'LISTEN %'`,
      )
    ).rows[0].n;
  let n = await listening();
  for (let i = 0; i < 50 && n > 1; i++) {
    await new Promise((r) => setTimeout(r, 100));
    n = await listening();
  }
  expect(n).toBe(1);
  const be = await other.openBackend('pg', 'erin');
  await be.append('INBOX', msg({ subject: 'to everyone' }), {});
  for (const c of clients) await c.waitFor(/^\* 3 EXISTS\r\n/m, 15000);
  await be.close();
  for (const c of clients) c.close();
});

test('imported mail reaches an IDLE session when its rows commit, not at uid allocation', async () => {
  // An import allocates a batch's uids in a transaction of its own (the mailbox trigger
  // notifies then), and commits the rows later: the push must come with the rows. The batch
  // is held before its commit by the user's thread lock (thread-ops.js lockThreads, taken
  // in the batch's transaction), so the early push is seen, looked at, and found empty.
  const c = await RawClient.connect(env.port);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-imap-idle-import-'));
  // A pool of the test's own: the hold and the lock watch never wait behind the server's.
  const side = Knex({ client: 'pg', connection: env.db.url, pool: { min: 0, max: 2 } });
  const hold = await side.client.acquireConnection();
  let held = false;
  try {
    await c.cmd('a', `LOGIN erin "${PW.erin}"`);
    const exists = Number(/^\* (\d+) EXISTS/m.exec(await c.cmd('b', 'SELECT INBOX'))[1]);
    c.write('c IDLE\r\n');
    await c.waitFor(/^\+ [^\r\n]*\r\n/m);
    await env.service.store.mailboxChanges().ready();
    const { id: userId } = await env.db.knex('users').where({ name: 'erin' }).first('id');
    await hold.query('BEGIN');
    await hold.query('SELECT pg_advisory_xact_lock($1, $2)', [0x74687264, userId]);
    held = true;
    const file = path.join(dir, 'in.mbox');
    const mail = [msg({ subject: 'imported one' }), msg({ subject: 'imported two' })];
    fs.writeFileSync(
      file,
      mail.map((m) => `From a@example.org Sat Nov 28 00:00:00 2026\n${m}\n`).join(''),
    );
    const importing = other.transfer.importMail({
      kind: 'mbox',
      paths: [file],
      user: 'erin',
      mailbox: 'INBOX',
      progress: false,
    });
    // The batch waits for the thread lock: its uids are allocated (and were notified).
    for (;;) {
      const { rows } = await side.raw(
        `SELECT count(*)::int AS n FROM pg_locks
          WHERE locktype = 'advisory' AND NOT granted AND objid = ?`,
        [userId],
      );
      if (rows[0].n > 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    // The session's look at the early push finds no new row (not committed): let it happen.
    await new Promise((r) => setTimeout(r, 500));
    await hold.query('ROLLBACK');
    held = false;
    const report = await importing;
    expect(report.imported).toBe(2);
    // The fallback poll is ten minutes away: only a push at the commit brings this.
    await c.waitFor(new RegExp(`^\\* ${exists + 2} EXISTS\\r\\n`, 'm'), 30000);
    c.write('DONE\r\n');
    await c.waitFor(/^c OK/m);
  } finally {
    if (held) await hold.query('ROLLBACK');
    await side.client.releaseConnection(hold);
    await side.destroy();
    c.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
