'use strict';

const path = require('node:path');
const { useCliSuite } = require('@mailgate/test-support/db');
const { msg, importInbox } = require('@mailgate/test-support/mail');
const { onCitus, skipNotice } = require('@mailgate/test-support/skip');
const { until } = require('@mailgate/test-support/waits');

/*
 * vacuumUser on Citus (citus.js vacuumSharedPartitions): a user has no partitions of their own,
 * so the shared DEFAULT partitions are analyzed whole, on every shard — each of them, the ones
 * later migrations distributed too (message_imap, message_imap_lines, message_vocab: until
 * 2026-11-28 only distributeSchema's list was, and those were left to the workers' autovacuum).
 */
const citus = onCitus();
if (!citus) {
  skipNotice(__filename, 'Citus only: the shared DEFAULT partitions exist on a Citus cluster');
}

(citus ? describe : describe.skip)('vacuumUser on Citus analyzes every shared partition', () => {
  const ctx = useCliSuite('citus-vacuum');

  /** How often the shards of a distributed table were analyzed, summed over its shards. */
  async function analyses(table) {
    const r = await ctx.db.knex.raw(
      `SELECT result FROM run_command_on_shards(?, $$SELECT analyze_count + autoanalyze_count
         FROM pg_stat_user_tables WHERE relid = '%s'::regclass$$)`,
      [table],
    );
    return r.rows.reduce((n, x) => n + Number(x.result || 0), 0);
  }

  test('the later tables too', async () => {
    const mail = Array.from({ length: 12 }, (_, i) => msg({ subject: `vacuum ${i}` }));
    const { user } = await importInbox(ctx.db.store, path.join(ctx.tmp, 'v.mbox'), mail, 'vac');
    const tables = ['message_imap_all', 'message_imap_lines_all', 'message_vocab_all'];
    const before = {};
    for (const t of tables) before[t] = await analyses(t);
    await ctx.db.store.vacuumUser(user.id);
    for (const t of tables) {
      // The workers' statistics counters are flushed shortly after the VACUUM ends.
      expect([t, await until(async () => (await analyses(t)) > before[t])]).toEqual([t, true]);
    }
  });
});
