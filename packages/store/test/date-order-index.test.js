'use strict';

const path = require('node:path');
const { PgStore } = require('@mailgate/store');
const { useCliSuite } = require('@mailgate/test-support/db');
const { msg, importInbox } = require('@mailgate/test-support/mail');

/*
 * Date order is the default order of the list, the API and the CLI (issue 30.11), so its
 * keyset page must be an index range scan, never a sort of the whole mailbox: the statement
 * the store runs for a date page (first page and a page after a cursor, both directions) is
 * explained with sequential scans and sorts priced out, and its plan must read
 * messages_sortdate_idx (user, mailbox, coalesce(date, internal_date), uid) with no Sort
 * node. A plan shape, not a timing: it holds on a busy machine.
 */
describe('date-order keyset pages read the sort-date index', () => {
  const ctx = useCliSuite('dix');
  let store;
  let user;
  let mailboxId;

  beforeAll(async () => {
    store = new PgStore(ctx.db.knex, { listCacheRows: 0 });
    const messages = [];
    for (let i = 0; i < 200; i++) {
      // Dates out of import order, some shared (ties broken by uid).
      const day = String(1 + ((i * 7) % 28)).padStart(2, '0');
      messages.push(msg({ subject: `n${i}`, date: `Mon, ${day} Apr 2002 10:00:00 +0000` }));
    }
    const got = await importInbox(store, path.join(ctx.tmp, 'dates.mbox'), messages, 'dix');
    await ctx.db.knex.raw('ANALYZE messages');
    user = got.user;
    mailboxId = got.inbox.id;
  });

  /** The SQL statements scanPage sends for `opts`, with their bindings. */
  async function statementsOf(opts) {
    const seen = [];
    const listen = (q) => seen.push({ sql: q.sql, bindings: q.bindings });
    ctx.db.knex.on('query', listen);
    try {
      await store.scanPage(user.id, mailboxId, opts);
    } finally {
      ctx.db.knex.off('query', listen);
    }
    return seen.filter((q) => /ORDER BY/i.test(q.sql) && /FROM messages m/.test(q.sql));
  }

  async function planOf({ sql, bindings }) {
    const knex = ctx.db.knex;
    const conn = await knex.client.acquireConnection();
    try {
      await conn.query('BEGIN');
      await conn.query('SET LOCAL enable_seqscan = off');
      await conn.query('SET LOCAL enable_sort = off');
      const r = await conn.query(`EXPLAIN ${sql}`, bindings);
      await conn.query('ROLLBACK');
      return r.rows.map((x) => x['QUERY PLAN']).join('\n');
    } finally {
      await knex.client.releaseConnection(conn);
    }
  }

  test.each([
    ['newest first', { desc: true }],
    ['oldest first', { desc: false }],
  ])('%s: first page and the page after a cursor', async (_name, dir) => {
    const first = await store.scanPage(user.id, mailboxId, { limit: 20, order: 'date', ...dir });
    expect(first.next).not.toBeNull();
    for (const opts of [
      { limit: 20, order: 'date', ...dir },
      { limit: 20, order: 'date', ...dir, after: first.next },
    ]) {
      const statements = await statementsOf(opts);
      expect(statements).toHaveLength(1);
      const plan = await planOf(statements[0]);
      // The index on the parent is messages_sortdate_idx; on a user's partition PostgreSQL
      // names it after its columns (messages_u1_user_id_mailbox_id_coalesce_uid_idx).
      expect(plan).toMatch(
        /Index Scan( Backward)? using \S*(sortdate|coalesce_uid)\S* on messages/,
      );
      expect(plan).not.toMatch(/^\s*(->\s*)?(Incremental )?Sort\b/m);
      // After a cursor the keyset position is an index condition, not a filter on every row.
      if (opts.after)
        expect(plan).toMatch(/Index Cond: .*ROW\(COALESCE\(date, internal_date\), uid\)/);
    }
  });

  test('the pages in date order are the rows sorted by date, then uid', async () => {
    const all = [];
    let after = null;
    do {
      const p = await store.scanPage(user.id, mailboxId, {
        limit: 17,
        order: 'date',
        desc: true,
        after,
      });
      all.push(...p.rows);
      after = p.next;
    } while (after);
    const key = (r) => `${new Date(r.date).toISOString()} ${String(r.uid).padStart(6, '0')}`;
    const want = [...all].sort((a, b) => (key(a) < key(b) ? 1 : -1));
    expect(all.map((r) => r.uid)).toEqual(want.map((r) => r.uid));
    expect(new Set(all.map((r) => r.uid)).size).toBe(200);
  });
});
