'use strict';

const crypto = require('node:crypto');
const { guardPgClients } = require('@mailgate/test-support/pg-serial');
const { useTestDatabase } = require('@mailgate/test-support/db');

/*
 * The store's own connections outside the pool (health-probe.js): the /health ping and the
 * IMAP servers' credential check each keep one raw connection that every caller shares. Two
 * callers at once once wrote two statements to it (node-postgres queued the second and
 * warned "Calling client.query() when the client is already executing a query", which pg@9
 * refuses): an IMAP server's timer started a check each tick while the last still ran, and
 * several servers of one process share the store. Now each caller waits for its turn. The
 * guard fails any test here in which a connection gets a statement while it runs another.
 */

const guard = guardPgClients();
const ctx = useTestDatabase();
const HASH = { ann: 'hash of ann', bob: 'hash of bob', cy: 'hash of cy' };
const md5 = (s) => crypto.createHash('md5').update(s).digest('hex');

beforeAll(async () => {
  for (const [name, passwordHash] of Object.entries(HASH)) {
    await ctx.db.store.createUser(name, { passwordHash });
  }
});
afterAll(async () => {
  await ctx.db.store.closeCredentialProbe();
  await ctx.db.store.closeHealthProbe();
});

test('credential checks at once: each gets its own users’ stamps, one statement at a time', async () => {
  const asks = [['ann'], ['bob'], ['ann', 'cy'], ['cy', 'nobody'], ['bob', 'ann', 'cy'], ['ann']];
  const answers = await Promise.all(asks.map((names) => ctx.db.store.credentialStamps(names)));
  answers.forEach((stamps, i) => {
    const want = asks[i].filter((n) => HASH[n]).map((n) => [n, md5(HASH[n])]);
    expect([...stamps].sort()).toEqual(want.sort());
  });
  // The same connection serves the next round (it was neither dropped nor left busy).
  const conn = ctx.db.store.credentialProbe.conn;
  expect(conn).toBeTruthy();
  await Promise.all([
    ctx.db.store.credentialStamps(['bob']),
    ctx.db.store.credentialStamps(['cy']),
  ]);
  expect(ctx.db.store.credentialProbe.conn).toBe(conn);
});

test('health pings at once all answer, on the one kept connection', async () => {
  await Promise.all(Array.from({ length: 8 }, () => ctx.db.store.ping()));
  const conn = ctx.db.store.healthProbe.conn;
  await Promise.all(Array.from({ length: 8 }, () => ctx.db.store.ping()));
  expect(ctx.db.store.healthProbe.conn).toBe(conn);
});

test('the guard sees a second statement on a busy connection (so it can fail)', async () => {
  const conn = await ctx.db.knex.client.acquireRawConnection();
  try {
    await Promise.all([conn.query('SELECT pg_sleep(0.05)'), conn.query('SELECT 1')]);
    // Taken here, so this test's own offence does not fail it.
    expect(guard.take()).toEqual([expect.stringMatching(/^SELECT 1\n/)]);
  } finally {
    await ctx.db.knex.client.destroyRawConnection(conn);
  }
});
