'use strict';

const Knex = require('knex');
const { useTestDatabase } = require('@mailgate/test-support/db');
const { until } = require('@mailgate/test-support/waits');
const { AppendWriter } = require('../lib/append-writer');

/*
 * A backend ended in the middle of an append's pipelined transaction (a PostgreSQL restart,
 * a failover, pg_terminate_backend) fails that append, never the process: a checked-out
 * client had no 'error' listener, so node-postgres's 'error' event was unhandled and ended
 * the serve/LMTP process (review finding, s7). The next append gets a new connection.
 */
describe('append writer, connection lost mid-transaction', () => {
  const ctx = useTestDatabase();
  let knex = null;
  let writer = null;

  beforeAll(() => {
    knex = Knex({ client: 'pg', connection: ctx.db.url, pool: { min: 0, max: 2 } });
    writer = new AppendWriter(knex);
  });

  afterAll(async () => {
    if (writer) await writer.close();
    if (knex) await knex.destroy();
  });

  test('the append rejects, the process lives, the next append works', async () => {
    const uncaught = [];
    const onUncaught = (err) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      let seen = null;
      const run = writer.transaction(async (tx) => {
        const r = await tx.send('SELECT pg_backend_pid() AS pid, ?::int AS x', [1]);
        // Work between two statements (thread lookups, the brotli of the raw bytes): the
        // backend goes away meanwhile, idle in the transaction.
        await knex.raw('SELECT pg_terminate_backend(?::int)', [r.rows[0].pid]);
        expect(await until(() => tx.failed !== null)).toBe(true);
        seen = tx.failed;
        await tx.send('SELECT 2');
      });
      await expect(run).rejects.toThrow();
      expect(seen).toBeInstanceOf(Error);
      expect(uncaught).toEqual([]);

      const again = await writer.transaction(async (tx) => {
        const r = await tx.send('SELECT ?::int AS x', [7]);
        await tx.send('COMMIT');
        tx.open = false;
        return r.rows[0].x;
      });
      expect(again).toBe(7);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });
});
