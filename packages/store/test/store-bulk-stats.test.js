'use strict';

const path = require('node:path');
const { useCliSuite } = require('@mailgate/test-support/db');
const { msg, importInbox } = require('@mailgate/test-support/mail');
const { singlePostgresOnly } = require('@mailgate/test-support/skip');
const { isBulkWrite, BULK_MIN_ROWS } = require('../lib/stats-ops');

// Planner statistics after bulk writes (issue 35.4): a COPY of thousands of messages into a new
// mailbox, or a purge of as many, refreshes the user's partitions' statistics after its
// commit; a small write does not (real PostgreSQL).
// What it checks is the per-user partitions' statistics: on Citus a user has none of their own.
const perUser = singlePostgresOnly(
  __filename,
  'statistics of per-user partitions (on Citus the workers keep those of the shared shards)',
)
  ? describe.skip
  : describe;
perUser('store: planner statistics after bulk copy, move and purge', () => {
  const ctx = useCliSuite('bulkstats');
  const N = 2500;
  let db;
  let user;
  let inbox;
  beforeAll(async () => {
    db = ctx.db;
    const messages = [];
    for (let i = 1; i <= N; i++) {
      messages.push(msg({ subject: `Note ${i}`, body: `Body ${i}\n` }));
    }
    const got = await importInbox(db.store, path.join(ctx.tmp, 'in.mbox'), messages, 'bs');
    user = got.user;
    inbox = got.inbox.id;
  }, 120000);

  const uidsOf = async (mailboxId) =>
    (
      await db.knex.raw(
        'SELECT uid FROM messages WHERE user_id = ? AND mailbox_id = ? AND NOT expunged ORDER BY uid',
        [user.id, mailboxId],
      )
    ).rows.map((r) => Number(r.uid));

  // The planner's estimate of a mailbox's live rows: what STORE's selection is planned by.
  const estimate = async (table, mailboxId) => {
    const r = await db.knex.raw(
      `EXPLAIN (FORMAT JSON) SELECT uid FROM ${table} WHERE user_id = ? AND mailbox_id = ?`,
      [user.id, mailboxId],
    );
    return r.rows[0]['QUERY PLAN'][0].Plan['Plan Rows'];
  };

  const lastAnalyze = async () => {
    const r = await db.knex.raw('SELECT last_analyze FROM pg_stat_user_tables WHERE relname = ?', [
      `messages_u${user.id}`,
    ]);
    return r.rows[0].last_analyze;
  };

  test('the threshold: a thousand rows and a tenth of the partition', () => {
    expect(isBulkWrite(BULK_MIN_ROWS - 1, 0)).toBe(false);
    expect(isBulkWrite(BULK_MIN_ROWS, -1)).toBe(true);
    expect(isBulkWrite(5000, 100000)).toBe(false);
    expect(isBulkWrite(10000, 100000)).toBe(true);
  });

  test('a bulk copy into a new mailbox leaves statistics that know its rows', async () => {
    const dst = (await db.store.createMailbox(user.id, 'Copy')).id;
    const uids = await uidsOf(inbox);
    const r = await db.store.copyMessages(user.id, inbox, uids, dst);
    expect(r.map).toHaveLength(N);
    await db.store.settleBackground();
    // Stale statistics take the new mailbox for a handful of rows (the plan that made STORE
    // after COPY take seconds); fresh ones count about N.
    for (const table of ['messages', 'message_sources', 'message_words', 'message_chunks']) {
      expect(await estimate(table, dst)).toBeGreaterThan(N / 2);
    }
    const mcv = await db.knex.raw(
      `SELECT most_common_vals::text AS v FROM pg_stats
        WHERE tablename = ? AND attname = 'mailbox_id'`,
      [`messages_u${user.id}`],
    );
    expect(mcv.rows[0].v.replace(/[{}]/g, '').split(',').map(Number)).toContain(dst);
  });

  test('a bulk move refreshes them too; a small copy runs no ANALYZE', async () => {
    const small = (await db.store.createMailbox(user.id, 'Small')).id;
    const before = await lastAnalyze();
    await db.store.copyMessages(user.id, inbox, (await uidsOf(inbox)).slice(0, 10), small);
    await db.store.settleBackground();
    expect(await lastAnalyze()).toEqual(before);

    const moved = (await db.store.createMailbox(user.id, 'Moved')).id;
    const copy = (await db.store.getMailbox(user.id, 'Copy')).id;
    await db.store.copyMessages(user.id, copy, await uidsOf(copy), moved, { move: true });
    await db.store.settleBackground();
    expect((await lastAnalyze()).getTime()).toBeGreaterThan(before.getTime());
    expect(await estimate('messages', moved)).toBeGreaterThan(N / 2);
  });

  test('a purge of many rows refreshes them', async () => {
    const moved = (await db.store.getMailbox(user.id, 'Moved')).id;
    await db.store.expunge(user.id, moved, { uids: await uidsOf(moved), force: true });
    const before = await lastAnalyze();
    expect(await db.store.purgeExpunged(user.id, moved)).toBe(N);
    await db.store.settleBackground();
    expect((await lastAnalyze()).getTime()).toBeGreaterThan(before.getTime());
    // The purged mailbox is empty to the planner again.
    expect(await estimate('messages', moved)).toBeLessThan(N / 10);
  });
});
