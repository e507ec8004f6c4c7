'use strict';

const { useCliSuite } = require('@mailgate/test-support/db');
const { msg, importInbox } = require('@mailgate/test-support/mail');
const { singlePostgresOnly } = require('@mailgate/test-support/skip');
const path = require('node:path');

// Store-level expunge variants and the statistics an import leaves behind (real PostgreSQL).
describe('store: force expunge, restoreExpunged, statistics after import', () => {
  const ctx = useCliSuite('sx');
  let db;
  let user;
  let mailboxId;
  beforeAll(async () => {
    db = ctx.db;
    const messages = [];
    for (let i = 1; i <= 40; i++) {
      messages.push(msg({ subject: `Note ${i}`, body: `Body ${i} MixedCase Word${i}\n` }));
    }
    let inbox;
    ({ user, inbox } = await importInbox(db.store, path.join(ctx.tmp, 'in.mbox'), messages, 'sx'));
    mailboxId = inbox.id;
  });

  const visible = async () => (await db.store.scanHeaders(user.id, mailboxId)).map((r) => r.uid);

  const perUser = singlePostgresOnly(
    __filename,
    'per-user partitions (on Citus a user shares the distributed DEFAULT partition)',
    'statistics of the new partitions',
  )
    ? test.skip
    : test;
  perUser('the import leaves planner statistics on the new partitions', async () => {
    const r = await db.knex.raw(
      `SELECT relname, last_analyze FROM pg_stat_user_tables
        WHERE relname IN (?, ?) ORDER BY relname`,
      [`messages_u${user.id}`, `message_sources_u${user.id}`],
    );
    expect(r.rows).toHaveLength(2);
    for (const row of r.rows) expect(row.last_analyze).not.toBeNull();
  });

  test('substring search is case-insensitive on lower-cased stored text', async () => {
    const hits = await db.store.search(user.id, 'text:MIXEDcase word7', { mailboxId });
    expect(hits.total).toBe(1);
    expect((await db.store.search(user.id, 'body:mixedcase', { mailboxId })).total).toBe(40);
  });

  test('without force only \\Deleted messages go; with force the given uids go', async () => {
    const all = await visible();
    const some = all.slice(0, 5);
    expect((await db.store.expunge(user.id, mailboxId, { uids: some })).expunged).toEqual([]);
    const r = await db.store.expunge(user.id, mailboxId, { uids: some, force: true });
    expect(r.expunged).toEqual(some);
    expect(await visible()).toEqual(all.slice(5));
    await expect(db.store.expunge(user.id, mailboxId, { force: true })).rejects.toThrow(
      /force needs uids/,
    );
  });

  test('restoreExpunged brings hidden messages back with their uids and a new modseq', async () => {
    const before = await db.store.getMailbox(user.id, 'INBOX');
    const hidden = (await db.knex('messages').where({ user_id: user.id, expunged: true }))
      .map((m) => Number(m.uid))
      .sort((a, b) => a - b);
    expect(hidden).toHaveLength(5);
    const r = await db.store.restoreExpunged(user.id, mailboxId, hidden);
    expect(r.restored).toEqual(hidden);
    expect(r.highestModseq).toBeGreaterThan(Number(before.highestmodseq));
    expect(await visible()).toHaveLength(40);
    const rows = await db.store.scanHeaders(user.id, mailboxId);
    for (const row of rows.filter((x) => hidden.includes(x.uid))) {
      expect(row.modseq).toBe(r.highestModseq);
    }
    // Purged messages cannot come back: nothing is restored.
    await db.store.expunge(user.id, mailboxId, { uids: hidden.slice(0, 2), force: true });
    expect(await db.store.purgeExpunged(user.id, mailboxId)).toBe(2);
    const again = await db.store.restoreExpunged(user.id, mailboxId, hidden.slice(0, 2));
    expect(again.restored).toEqual([]);
    expect(await visible()).toHaveLength(38);
  });
});
