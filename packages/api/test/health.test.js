'use strict';

const { guardPgClients } = require('@mailgate/test-support/pg-serial');
const { useApi } = require('./helpers');

// Issue 17 item 2: "/health never waits behind user work". Streams have their own cap, but
// ordinary requests (searches, pages) can hold every pooled connection at once; the health
// check must still answer at once, from its own connection, and still see a dead database.
// The check's one connection is shared by every request: a statement sent to it while it
// runs another fails the test (pg-serial.js; store test/probe-turns.test.js).
guardPgClients();
const t = useApi();

async function health() {
  const r = await t.app.inject({ url: '/api/v1/health' });
  return { status: r.statusCode, body: r.json() };
}

/**
 * One check, raced against the pool being asked for a connection: with every pooled
 * connection held, a check that asked the pool would queue behind user work (what issue 17
 * saw), so the ask itself is the failure, whatever the machine's speed. tarn emits
 * 'acquireRequest' synchronously when anything asks.
 */
async function healthBesidePool(pool) {
  let onAsk;
  const asked = new Promise((resolve) => {
    onAsk = () => resolve('asked the pool');
  });
  pool.on('acquireRequest', onAsk);
  try {
    return await Promise.race([health(), asked]);
  } finally {
    pool.removeListener('acquireRequest', onAsk);
  }
}

test('/health answers at once while user work holds every pooled connection', async () => {
  const { knex } = t.app.mailService.store;
  const pool = knex.client.pool;
  const held = [];
  // Take every connection the pool may open, as a burst of slow requests would.
  for (let i = 0; i < pool.max; i++) held.push(await knex.client.acquireConnection());
  try {
    expect(pool.numFree()).toBe(0);
    expect(pool.numUsed()).toBe(pool.max);
    for (let i = 0; i < 3; i++) {
      // Answered from its own connection, while every pooled one is still held.
      const r = await healthBesidePool(pool);
      expect(r).not.toBe('asked the pool');
      expect(r.status).toBe(200);
      // Every connection taken, nobody waiting yet: reachable and not saturated.
      expect(r.body).toMatchObject({ status: 'ok', db: 'ok' });
      expect(r.body.pool).toMatchObject({ used: pool.max, free: 0, waiting: 0 });
      expect(pool.numUsed()).toBe(pool.max);
    }
  } finally {
    for (const c of held) await knex.client.releaseConnection(c);
  }
});

test('issue 29.4: /health reports a saturated pool (every connection taken and requests waiting)', async () => {
  const { knex } = t.app.mailService.store;
  const pool = knex.client.pool;
  const held = [];
  for (let i = 0; i < pool.max; i++) held.push(await knex.client.acquireConnection());
  // One more request waits for a connection, as an innocent user's would behind a flood.
  const waiting = knex.client.acquireConnection();
  try {
    const r = await health();
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('saturated');
    expect(r.body.pool).toMatchObject({ size: pool.max, used: pool.max, saturated: true });
    expect(r.body.pool.waiting).toBeGreaterThan(0);
  } finally {
    for (const c of held) await knex.client.releaseConnection(c);
    await knex.client.releaseConnection(await waiting);
  }
  const after = await health();
  expect(after.body).toMatchObject({ status: 'ok', pool: { saturated: false, waiting: 0 } });
});

test('the health connection is replaced when the server drops it', async () => {
  expect((await health()).status).toBe(200);
  const { knex } = t.app.mailService.store;
  // End every other session of this database, the health check's included (what a
  // restart or failover does to a kept connection).
  await knex.raw(
    'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
  );
  const r = await health();
  expect(r.status).toBe(200);
  expect(r.body.db).toBe('ok');
});

test('checks at once (a load balancer and a monitor) all answer, one statement at a time', async () => {
  const answers = await Promise.all(Array.from({ length: 6 }, () => health()));
  for (const r of answers) {
    expect(r.status).toBe(200);
    expect(r.body.db).toBe('ok');
  }
});
