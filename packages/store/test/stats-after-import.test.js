'use strict';

const path = require('node:path');
const { useCliSuite } = require('@mailgate/test-support/db');
const { msg, importInbox } = require('@mailgate/test-support/mail');
const { singlePostgresOnly } = require('@mailgate/test-support/skip');

/*
 * Planner statistics after a bulk import (stats-ops.js analyzeUser, and vacuumUser that the
 * benchmarks run): every table the import filled, the IMAP metadata partitions and the shared
 * thread_keys included. Without theirs, until autovacuum came, each delivery into the user cost
 * the PostgreSQL backend ~6 ms more (bench/results/deliver-2026-11-28-warm, issue 32).
 */
const skip = singlePostgresOnly(
  __filename,
  'per-user partitions (on Citus a user shares partitions whose statistics the workers keep)',
  'statistics after import',
);

(skip ? describe.skip : describe)('statistics after a bulk import', () => {
  const ctx = useCliSuite('stats-import');

  /** How often each table was analyzed (manually, by VACUUM (ANALYZE) or by autovacuum). */
  async function analyses(tables) {
    const r = await ctx.db.knex.raw(
      `SELECT relname, analyze_count + autoanalyze_count AS n
         FROM pg_stat_user_tables WHERE relname = ANY(?)`,
      [tables],
    );
    return Object.fromEntries(
      tables.map((t) => [t, Number(r.rows.find((x) => x.relname === t)?.n ?? 0)]),
    );
  }

  const mail = Array.from({ length: 30 }, (_, i) =>
    msg({
      subject: i % 3 ? `Re: topic ${i % 5}` : `topic ${i % 5}`,
      headers: [`Message-ID: <s${i}@x>`, ...(i % 3 ? [`In-Reply-To: <s${i - 1}@x>`] : [])],
    }),
  );

  test('an import analyzes the IMAP metadata partitions and thread_keys too', async () => {
    const before = (await analyses(['thread_keys'])).thread_keys;
    const { user } = await importInbox(ctx.db.store, path.join(ctx.tmp, 'a.mbox'), mail, 'stats');
    const after = await analyses([
      `messages_u${user.id}`,
      `message_imap_u${user.id}`,
      `message_imap_lines_u${user.id}`,
      'thread_keys',
    ]);
    // The user's partitions are new: analyzed at least once; thread_keys once more.
    expect(after).toEqual({
      [`messages_u${user.id}`]: expect.any(Number),
      [`message_imap_u${user.id}`]: expect.any(Number),
      [`message_imap_lines_u${user.id}`]: expect.any(Number),
      thread_keys: expect.any(Number),
    });
    for (const [t, n] of Object.entries(after)) {
      expect([t, n > (t === 'thread_keys' ? before : 0)]).toEqual([t, true]);
    }
  });

  test('vacuumUser analyzes them as well', async () => {
    const { user } = await importInbox(ctx.db.store, path.join(ctx.tmp, 'b.mbox'), mail, 'stats2');
    const tables = [`message_imap_u${user.id}`, `message_imap_lines_u${user.id}`, 'thread_keys'];
    const before = await analyses(tables);
    await ctx.db.store.vacuumUser(user.id);
    const after = await analyses(tables);
    for (const t of tables) expect([t, after[t] > before[t]]).toEqual([t, true]);
  });
});
