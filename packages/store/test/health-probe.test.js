'use strict';

const { EventEmitter } = require('node:events');
const { HealthProbe } = require('@mailgate/store');

/*
 * The /health probe's own logic (issue 17) with a hand-made driver client whose connections
 * hang or fail on demand; the real-database cases are packages/api/test/health.test.js and
 * pg-restart.test.js. What matters here: during an outage, however often /health is asked,
 * at most one connection attempt is in flight, a late connection is reused (or closed after
 * close()), and every failure is the coded DB_UNAVAILABLE without driver text.
 */
function fakeClient() {
  const c = {
    attempts: 0,
    destroyed: 0,
    pending: [],
    acquireRawConnection() {
      c.attempts++;
      return new Promise((resolve, reject) => c.pending.push({ resolve, reject }));
    },
    destroyRawConnection() {
      c.destroyed++;
      return Promise.resolve();
    },
  };
  return c;
}

function fakeConnection(answer = () => Promise.resolve({ rows: [{ '?column?': 1 }] })) {
  const conn = new EventEmitter();
  conn.queries = 0;
  conn.query = () => {
    conn.queries++;
    return answer();
  };
  return conn;
}

const coded = expect.objectContaining({
  code: 'DB_UNAVAILABLE',
  message: expect.not.stringMatching(/ECONN|127\.0\.0\.1|password/),
});

test('a hanging connect: one attempt in flight for any number of checks, then reused', async () => {
  const client = fakeClient();
  const probe = new HealthProbe({ client }, { timeoutMs: 30 });
  for (let i = 0; i < 5; i++) {
    const r = await Promise.allSettled([probe.ping(), probe.ping(), probe.ping()]);
    expect(r.map((x) => x.status)).toEqual(['rejected', 'rejected', 'rejected']);
    for (const x of r) expect(x.reason).toEqual(coded);
  }
  expect(client.attempts).toBe(1);
  // The database answers at last: the late connection serves the next check.
  const conn = fakeConnection();
  client.pending[0].resolve(conn);
  await new Promise((r) => setImmediate(r));
  await probe.ping();
  expect(client.attempts).toBe(1);
  expect(conn.queries).toBe(1);
  expect(client.destroyed).toBe(0);
});

test('a refused connect is DB_UNAVAILABLE with fixed text, and the next check tries again', async () => {
  const client = fakeClient();
  const probe = new HealthProbe({ client }, { timeoutMs: 1000 });
  const p = probe.ping();
  client.pending[0].reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {}));
  await expect(p).rejects.toEqual(coded);
  const q = probe.ping();
  expect(client.attempts).toBe(2);
  client.pending[1].resolve(fakeConnection());
  await q;
});

test('a hung query replaces the connection; a connection arriving after close() is closed', async () => {
  const client = fakeClient();
  const probe = new HealthProbe({ client }, { timeoutMs: 30 });
  const hung = fakeConnection(() => new Promise(() => {}));
  const p = probe.ping();
  client.pending[0].resolve(hung);
  await expect(p).rejects.toEqual(coded);
  expect(client.destroyed).toBe(1);

  const q = probe.ping();
  await expect(q).rejects.toEqual(coded); // nobody answers the second connect in time
  await probe.close();
  client.pending[1].resolve(fakeConnection());
  await new Promise((r) => setImmediate(r));
  expect(client.destroyed).toBe(2);
});

test('an idle connection the server drops is forgotten, not fatal', async () => {
  const client = fakeClient();
  const probe = new HealthProbe({ client }, { timeoutMs: 1000 });
  const first = fakeConnection();
  const p = probe.ping();
  client.pending[0].resolve(first);
  await p;
  first.emit('error', new Error('terminating connection due to administrator command'));
  const q = probe.ping();
  expect(client.attempts).toBe(2);
  client.pending[1].resolve(fakeConnection());
  await q;
});

test('callers at once take turns on the connection, in the order they asked', async () => {
  const client = fakeClient();
  const probe = new HealthProbe({ client }, { timeoutMs: 60000 });
  // A connection that answers when told and counts statements sent while it is busy.
  const answers = [];
  let busy = false;
  let overlaps = 0;
  const conn = fakeConnection(() => {
    if (busy) overlaps++;
    busy = true;
    return new Promise((resolve) => answers.push(resolve)).finally(() => (busy = false));
  });
  const asked = [probe.query('a'), probe.query('b'), probe.ping(), probe.query('c')];
  client.pending[0].resolve(conn);
  for (let i = 0; i < asked.length; i++) {
    while (answers.length <= i) await new Promise((r) => setImmediate(r));
    expect(conn.queries).toBe(i + 1); // the next one is sent only after this answer
    answers[i]({ rows: [{ i }] });
  }
  const [a, b, , c] = await Promise.all(asked);
  expect([a.rows[0].i, b.rows[0].i, c.rows[0].i]).toEqual([0, 1, 3]);
  expect(overlaps).toBe(0);
  expect(client.attempts).toBe(1);
});

test('a hung statement gives its turn up: the caller behind it runs on a fresh connection', async () => {
  const client = fakeClient();
  const probe = new HealthProbe({ client }, { timeoutMs: 50 });
  const hanging = fakeConnection(() => new Promise(() => {}));
  const hung = probe.query('hangs');
  client.pending[0].resolve(hanging);
  while (hanging.queries < 1) await new Promise((r) => setImmediate(r));
  // From now on a connection is there at once (only the hung statement's timeout is timed).
  const fresh = fakeConnection();
  client.acquireRawConnection = () => {
    client.attempts++;
    return Promise.resolve(fresh);
  };
  // Asked after the hung statement was sent: its wait for the turn ends after that timeout.
  const next = probe.query('next');
  await expect(hung).rejects.toEqual(coded);
  await expect(next).resolves.toEqual({ rows: [{ '?column?': 1 }] });
  expect(client.destroyed).toBe(1);
  expect(client.attempts).toBe(2);
  expect(hanging.queries).toBe(1); // nothing more on the dropped connection
  expect(fresh.queries).toBe(1);
});
