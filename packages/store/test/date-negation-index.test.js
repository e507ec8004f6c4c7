'use strict';

const path = require('node:path');
const { PgStore } = require('@mailgate/store');
const { useCliSuite } = require('@mailgate/test-support/db');
const { msg, importInbox } = require('@mailgate/test-support/mail');
const { singlePostgresOnly } = require('@mailgate/test-support/skip');

// The answers are checked everywhere; the plan only on a single PostgreSQL: on Citus the
// shard's plan is made on a worker, which the coordinator's `enable_seqscan = off` does not reach.
const planOnWorker = singlePostgresOnly(
  __filename,
  "a shard's plan is made on a worker, without the coordinator's enable_seqscan = off",
  'the plan checks',
);

/*
 * A negated date term (`-after:D`, and the "no date" part of IMAP SENT*'s candidates: a UTC
 * day near the asked one, or no Date at all) is answered by the date index, not by reading
 * every row of the mailbox (issue 35.2: SENTON on the large Enron mailbox read the wide
 * `messages` rows whole for each SEARCH). The answers keep their meaning: a message without a
 * date is outside every date range and inside every negated one. Plans are explained with
 * sequential scans priced out: a plan shape, not a timing.
 */
describe('negated date terms read the date index', () => {
  const ctx = useCliSuite('dneg');
  let store;
  let user;
  let inbox;

  beforeAll(async () => {
    store = new PgStore(ctx.db.knex, { listCacheRows: 0 });
    const messages = [];
    for (let i = 0; i < 600; i++) {
      // Every tenth message has no Date header (a NULL date).
      messages.push(
        msg({
          subject: `d${i}`,
          date:
            i % 10 === 9
              ? null
              : `Mon, ${String(1 + (i % 28)).padStart(2, '0')} Apr 2002 10:00:00 +0000`,
        }),
      );
    }
    ({ user, inbox } = await importInbox(store, path.join(ctx.tmp, 'd.mbox'), messages, 'dneg'));
    await ctx.db.knex.raw('ANALYZE messages');
  });

  // uid → the date the store keeps (null when none), as the in-memory reference.
  const dates = async () =>
    new Map(
      (
        await ctx.db.knex.raw(
          'SELECT uid, date FROM messages WHERE user_id = ? AND mailbox_id = ?',
          [user.id, inbox.id],
        )
      ).rows.map((r) => [Number(r.uid), r.date ? r.date.toISOString().slice(0, 10) : null]),
    );

  async function searched(ast) {
    const seen = [];
    const listen = (q) => seen.push({ sql: q.sql, bindings: q.bindings });
    ctx.db.knex.on('query', listen);
    let hits;
    try {
      hits = (await store.search(user.id, ast, { mailboxId: inbox.id })).hits.map((h) => h.uid);
    } finally {
      ctx.db.knex.off('query', listen);
    }
    const statements = seen.filter((q) => /FROM messages m/.test(q.sql));
    expect(statements).toHaveLength(1);
    return { hits, statement: statements[0] };
  }

  async function planOf({ sql, bindings }) {
    const knex = ctx.db.knex;
    const conn = await knex.client.acquireConnection();
    try {
      await conn.query('BEGIN');
      await conn.query('SET LOCAL enable_seqscan = off');
      const r = await conn.query(`EXPLAIN ${sql}`, bindings);
      await conn.query('ROLLBACK');
      return r.rows.map((x) => x['QUERY PLAN']).join('\n');
    } finally {
      await knex.client.releaseConnection(conn);
    }
  }

  const date = (op, value) => ({ type: 'date', op, value });
  const not = (child) => ({ type: 'not', child });

  // plan: whether the term is selective enough that the date index must answer it (a third
  // of the mailbox may be read whole, whatever the form).
  test.each([
    ['-after:', not(date('after', '2002-04-10')), (d) => d === null || d < '2002-04-10', false],
    ['-before:', not(date('before', '2002-04-10')), (d) => d === null || d >= '2002-04-10', false],
    ['-on:', not(date('on', '2002-04-10')), (d) => d !== '2002-04-10', false],
    ['no date at all', not(date('after', '1000-01-01')), (d) => d === null, true],
    [
      'SENT* candidates: a UTC day in the band, or no date',
      {
        type: 'or',
        children: [
          { type: 'and', children: [date('after', '2002-04-08'), date('before', '2002-04-13')] },
          not(date('after', '1000-01-01')),
        ],
      },
      (d) => d === null || (d >= '2002-04-08' && d < '2002-04-13'),
      true,
    ],
  ])('%s: the same answer, from the date index', async (_name, ast, want, selective) => {
    const byUid = await dates();
    expect([...byUid.values()].filter((d) => d === null)).toHaveLength(60);
    const { hits, statement } = await searched(ast);
    const expected = [...byUid]
      .filter(([, d]) => want(d))
      .map(([u]) => u)
      .sort((a, b) => a - b);
    expect(hits).toEqual(expected);
    expect(hits.length).toBeGreaterThan(0);
    if (!selective || planOnWorker) return;
    const plan = await planOf(statement);
    expect(plan).not.toMatch(/Seq Scan on messages/);
    // The index on the parent is messages_date_idx; on a user's partition PostgreSQL names it
    // after its columns (messages_u1_user_id_mailbox_id_date_idx).
    expect(plan).toMatch(/Index Cond: .*date IS NULL/);
  });
});
