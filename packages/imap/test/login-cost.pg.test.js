'use strict';

/*
 * Issue 35 item 3 (cold open): LOGIN made sure INBOX exists by listing the user's mailboxes
 * with their counts, a read of every message row of the user (~240 ms cold on the 21,282-message
 * mailbox, and it warmed the page cache for the SELECT and FETCH timed after it). LOGIN reads
 * the INBOX's own row only. Shown without a clock: while another transaction holds the
 * messages table locked, LOGIN still completes; it waited for the lock when it counted.
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

async function loginWhileMessagesLocked(user, password) {
  const lock = await t.db.knex.client.acquireConnection();
  const c = await RawClient.connect(t.port);
  try {
    await lock.query('BEGIN');
    await lock.query('LOCK TABLE messages IN ACCESS EXCLUSIVE MODE');
    const answer = await Promise.race([
      c.cmd('a1', `LOGIN ${user} "${password}"`),
      new Promise((resolve) => setTimeout(() => resolve('a1 STILL WAITING'), 15000)),
    ]);
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
