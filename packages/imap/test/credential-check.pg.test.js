'use strict';

const { guardPgClients } = require('@mailgate/test-support/pg-serial');
const { createImapServer } = require('../lib');
const { startPgServer } = require('./helpers');
const { RawClient } = require('./raw-client');

/*
 * The credential check of logged-in sessions (server.js watchCredentials, issue 29.7) runs on
 * a timer every IMAP_IDLE_POLL_MS and asks the store on the store's one credential
 * connection. A check slower than the interval was joined by another at every tick: they
 * piled up as statements queued on that one connection (node-postgres: "Calling
 * client.query() when the client is already executing a query", refused by pg@9). Here the
 * users table is held by another transaction, so a check cannot finish: one check stays in
 * flight, no second one starts, and two servers of one process never write to the shared
 * connection at once. Counted, never timed.
 */

guardPgClients();
const PW = { ann: 'ann pw 123', bob: 'bob pw 123' };
let env;

beforeAll(async () => {
  env = await startPgServer({ users: PW });
}, 60000);
afterAll(() => env && env.close());

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Counts a server's credential checks: started, and at most how many at once. */
function countChecks(server) {
  const real = server.checkCredentials.bind(server);
  const n = { started: 0, inFlight: 0, most: 0 };
  server.checkCredentials = (sessions) => {
    n.started++;
    n.most = Math.max(n.most, ++n.inFlight);
    return real(sessions).finally(() => n.inFlight--);
  };
  return n;
}

/** Statements of the credential check waiting for a lock, now. */
async function waitingChecks() {
  const r = await env.db.knex.raw(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid()
        AND wait_event_type = 'Lock' AND query LIKE '%md5(coalesce(password_hash%'`,
  );
  return r.rows[0].n;
}

test('a check that cannot finish is not joined by another at each tick, on any server', async () => {
  // A second server on the same service: its checks share the store's credential connection.
  const other = createImapServer({ service: env.service, limits: { idlePollMs: 100 } });
  const { port: otherPort } = await other.listen({ port: 0, host: '127.0.0.1' });
  const counts = [countChecks(env.server), countChecks(other)];
  const clients = [];
  let trx = null;
  try {
    for (const [user, port] of [
      ['ann', env.port],
      ['bob', otherPort],
    ]) {
      const c = await RawClient.connect(port);
      clients.push(c);
      expect(await c.cmd('a', `LOGIN ${user} "${PW[user]}"`)).toMatch(/^a OK/m);
    }
    // Both servers check every 100 ms from now on; hold the users table so none can finish.
    trx = await env.db.knex.transaction();
    await trx.raw('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
    while ((await waitingChecks()) === 0) await sleep(20);
    // Ten intervals and more: the old timer started a check at each of them.
    await sleep(1000);
    for (const n of counts) expect(n.most).toBe(1);
    await trx.commit();
    trx = null;

    // Still watching: a password change closes ann's session, bob's stays.
    await env.service.users.setPassword('ann', 'ann new pw 456');
    await clients[0].waitFor(/^\* BYE Credentials changed; log in again\r\n/m, 20000);
    expect(await clients[1].cmd('n', 'NOOP')).toMatch(/^n OK/m);
    for (const n of counts) expect(n.most).toBe(1);
  } finally {
    if (trx) await trx.rollback();
    for (const c of clients) c.close();
    await other.close();
  }
});
