'use strict';

/*
 * Issue 35 item 3 (cold open): LOGIN made sure INBOX exists by listing the user's mailboxes
 * with their counts, a read of every message row of the user (~240 ms cold on the 21,282-message
 * mailbox, and it warmed the page cache for the SELECT and FETCH timed after it). LOGIN reads
 * the INBOX's own row only. Shown without a clock: while another transaction holds the
 * messages table locked, LOGIN still completes; it waited for the lock when it counted, which
 * the database shows (an ungranted lock in pg_locks) — the answer races that sight, not a timer.
 */

const { startPgServer } = require('./helpers');
const { RawClient } = require('./raw-client');

let t;
beforeAll(async () => {
  t = await startPgServer({ users: { alice: 'alice pw', bob: 'bob pw' } });
  const be = await t.service.openBackend('pg', 'alice');
  await be.createMailbox('INBOX');
  await be.append('INBOX', Buffer.from('From: a@example.org\r\nSubject: one\r\n\r\nbody\r\n'));
  await be.close();
});
afterAll(() => t.close());

/**
 * Resolves 'a1 WAITED FOR A LOCK' once a session of the test's database waits for a lock that
 * is not granted (polled while watch.on), or 'a1 NO ANSWER' after a minute of neither.
 * @param {{on: boolean}} watch
 * @returns {Promise<string>}
 */
async function lockWaitSeen(watch) {
  const until = Date.now() + 60000;
  while (watch.on && Date.now() < until) {
    const { rows } = await t.db.knex.raw(
      `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_database d ON d.oid = l.database
        WHERE NOT l.granted AND d.datname = current_database()`,
    );
    if (rows[0].n > 0) return 'a1 WAITED FOR A LOCK';
    await new Promise((r) => setTimeout(r, 25));
  }
  return 'a1 NO ANSWER';
}

async function loginWhileMessagesLocked(user, password) {
  const lock = await t.db.knex.client.acquireConnection();
  const c = await RawClient.connect(t.port);
  try {
    await lock.query('BEGIN');
    await lock.query('LOCK TABLE messages IN ACCESS EXCLUSIVE MODE');
    // LOGIN's answer raced against the database seeing a session wait for a lock (the LOGIN
    // that reads message rows blocks behind ours): either outcome is a fact, neither a clock.
    // The watch's cap only ends a run that neither answers nor waits (a hang guard).
    const watch = { on: true };
    const answer = await Promise.race([
      c.cmd('a1', `LOGIN ${user} "${password}"`),
      lockWaitSeen(watch),
    ]);
    watch.on = false;
    return /^a1 [^\r\n]*/m.exec(answer)[0];
  } finally {
    await lock.query('ROLLBACK');
    await t.db.knex.client.releaseConnection(lock);
    c.close();
  }
}

test('LOGIN reads no message rows (completes while the messages table is locked)', async () => {
  expect(await loginWhileMessagesLocked('alice', 'alice pw')).toMatch(/^a1 OK/);
});

test('LOGIN still creates a missing INBOX (a user made by `user add` has none)', async () => {
  expect(await loginWhileMessagesLocked('bob', 'bob pw')).toMatch(/^a1 OK/);
  const be = await t.service.openBackend('pg', 'bob');
  expect((await be.listMailboxes()).map((b) => b.name)).toContain('INBOX');
  await be.close();
});
