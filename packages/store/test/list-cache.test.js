'use strict';

const path = require('node:path');
const {
  PgStore,
  listRowOf,
  byName,
  LIST_FORMAT,
  packListRow,
  unpackListRow,
} = require('@mailgate/store');
const { useCliSuite } = require('@mailgate/test-support/db');
const { msg, importMessages } = require('@mailgate/test-support/mail');

/*
 * The store's list cache (packages/store/lib/list-cache.js) against real PostgreSQL: one
 * store instance scans with the cache, other instances (other sessions, as another process
 * would be) change the mailbox in between; every cached scan must equal the uncached SQL scan.
 */
describe('list cache: exact by modseq under other sessions’ changes', () => {
  const ctx = useCliSuite('lc');
  let db;
  let cached; // the session that scans (cache on)
  let other; // another session (its own cache, never consulted here)
  let plain; // the reference: no cache, straight SQL
  let user;
  let mailboxId;

  const importFile = async (name, from, to) => {
    const messages = [];
    for (let i = from; i <= to; i++) {
      messages.push(msg({ subject: `Note ${i}`, body: `Body ${i}\n` }));
    }
    await importMessages(other, path.join(ctx.tmp, name), {
      messages,
      user: 'lc',
      mailbox: 'INBOX',
    });
  };
  const same = async (opts = {}) => {
    const got = await cached.scanHeaders(user.id, mailboxId, opts);
    const want = await plain.scanHeaders(user.id, mailboxId, opts);
    expect(got).toEqual(want);
    // The list view (its own cache, same exactness): the projection of the full rows.
    const all = await plain.scanHeaders(user.id, mailboxId);
    expect(await cached.scanList(user.id, mailboxId)).toEqual(all.map(listRowOf));
    return got;
  };

  beforeAll(async () => {
    db = ctx.db;
    cached = new PgStore(db.knex, { listCacheRows: 1000 });
    other = new PgStore(db.knex, { listCacheRows: 1000 });
    plain = new PgStore(db.knex, { listCacheRows: 0 });
    await importFile('a.mbox', 1, 60);
    user = await plain.getUser('lc');
    mailboxId = (await plain.getMailbox(user.id, 'INBOX')).id;
  });

  test('a repeat scan is a hit; pages in both orders equal the SQL scan', async () => {
    expect(plain.listCache).toBeNull();
    await same();
    const before = { ...cached.listCache.stats };
    const rows = await same();
    expect(rows).toHaveLength(60);
    expect(cached.listCache.stats.hits).toBe(before.hits + 1);
    for (const opts of [
      { limit: 7 },
      { limit: 7, afterUid: 10 },
      { limit: 7, order: 'desc' },
      { limit: 7, order: 'desc', afterUid: 10 },
      { order: 'desc', afterUid: 3 },
      { afterUid: 60 },
      { limit: 5, afterUid: 1000, order: 'desc' },
    ]) {
      await same(opts);
    }
    // The shared rows cannot be changed by a caller.
    expect(Object.isFrozen(rows[0])).toBe(true);
  });

  test('flag changes, appends and expunges by another session are seen at the next scan', async () => {
    await same();
    const uids = (await plain.scanHeaders(user.id, mailboxId)).map((r) => r.uid);
    await other.setFlags(user.id, mailboxId, {
      uids: uids.slice(0, 5),
      add: ['\\Seen', '$Label1'],
      remove: [],
    });
    const deltas = cached.listCache.stats.deltas;
    const afterFlags = await same();
    expect(cached.listCache.stats.deltas).toBe(deltas + 1);
    expect(afterFlags[0].flags).toContain('\\Seen');

    await importFile('b.mbox', 61, 70); // another session appends
    expect(await same()).toHaveLength(70);

    await other.setFlags(user.id, mailboxId, { uids: uids.slice(10, 13), add: ['\\Deleted'] });
    const gone = await other.expunge(user.id, mailboxId, {});
    expect(gone.expunged).toHaveLength(3);
    const afterExpunge = await same();
    expect(afterExpunge).toHaveLength(67);
    expect(afterExpunge.map((r) => r.uid)).not.toContain(uids[11]);

    // Restored (un-hidden) messages come back in uid order.
    await other.restoreExpunged(user.id, mailboxId, gone.expunged);
    expect(await same()).toHaveLength(70);
  });

  test('an expunge hidden and purged between two scans forces an exact reload', async () => {
    await same();
    const uids = (await plain.scanHeaders(user.id, mailboxId)).map((r) => r.uid);
    await other.expunge(user.id, mailboxId, { uids: uids.slice(20, 24), force: true });
    await other.purgeExpunged(user.id, mailboxId, { graceMs: 0 });
    const loads = cached.listCache.stats.loads;
    expect(await same()).toHaveLength(66);
    expect(cached.listCache.stats.loads).toBe(loads + 1);
  });

  test('counts and the uid-order row stream come from the cache and equal SQL', async () => {
    expect(await cached.countMessages(user.id, mailboxId)).toEqual(
      await plain.countMessages(user.id, mailboxId),
    );
    for (const desc of [false, true]) {
      const a = [];
      for await (const r of cached.streamHeaderRows(user.id, mailboxId, { desc })) a.push(r);
      const b = [];
      for await (const r of plain.streamHeaderRows(user.id, mailboxId, { desc })) b.push(r);
      expect(a).toEqual(b);
    }
  });

  test("a page with its total and the unseen count stay exact across another session's changes", async () => {
    const check = async () => {
      const a = await cached.scanPage(user.id, mailboxId, { limit: 7, withTotal: true });
      const b = await plain.scanPage(user.id, mailboxId, { limit: 7, withTotal: true });
      // uid order: the cursor needs only the uid (the SQL path also fills in the date)
      expect([a.rows, a.total, a.next.uid]).toEqual([b.rows, b.total, b.next.uid]);
      // date order: rows by SQL, the total from the cached list when it is of the same modseq
      const da = { limit: 7, order: 'date', desc: true, withTotal: true };
      const c = await cached.scanPage(user.id, mailboxId, da);
      const d = await plain.scanPage(user.id, mailboxId, da);
      expect([c.rows, c.total, c.next]).toEqual([d.rows, d.total, d.next]);
      expect(await cached.countMessages(user.id, mailboxId)).toEqual(
        await plain.countMessages(user.id, mailboxId),
      );
      return a;
    };
    await same(); // cached
    const before = await check();
    const uids = (await plain.scanHeaders(user.id, mailboxId)).map((r) => r.uid);
    await other.setFlags(user.id, mailboxId, { uids: uids.slice(30, 34), add: ['\\Seen'] });
    const seen = await cached.countMessages(user.id, mailboxId);
    expect(seen.unseen).toBe((await plain.countMessages(user.id, mailboxId)).unseen);
    await other.setFlags(user.id, mailboxId, { uids: uids.slice(30, 32), remove: ['\\Seen'] });
    await check();
    await other.setFlags(user.id, mailboxId, { uids: uids.slice(40, 42), add: ['\\Deleted'] });
    const gone = await other.expunge(user.id, mailboxId, { uids: uids.slice(40, 42) });
    const after = await check();
    expect(after.total).toBe(before.total - 2);
    expect(cached.listCache.has(user.id, mailboxId)).toBe(true);
    // Leave the mailbox as the next tests expect it.
    await other.restoreExpunged(user.id, mailboxId, gone.expunged);
    await other.setFlags(user.id, mailboxId, { uids: uids.slice(40, 42), remove: ['\\Deleted'] });
    await other.setFlags(user.id, mailboxId, { uids: uids.slice(30, 32), remove: ['\\Seen'] });
    expect((await check()).total).toBe(before.total);
  });

  test('a page of a mailbox not cached yet is read by SQL while the cache fills in the background', async () => {
    const fresh = new PgStore(db.knex, { listCacheRows: 1000 });
    const a = await fresh.scanPage(user.id, mailboxId, { limit: 5 });
    expect(a.rows).toEqual((await plain.scanPage(user.id, mailboxId, { limit: 5 })).rows);
    expect(await fresh.countMessages(user.id, mailboxId)).toEqual(
      await plain.countMessages(user.id, mailboxId),
    );
    await Promise.all([...fresh.listCache.loading.values()]);
    expect(fresh.listCache.has(user.id, mailboxId)).toBe(true);
    const hits = fresh.listCache.stats.hits;
    await fresh.scanPage(user.id, mailboxId, { limit: 5 });
    expect(fresh.listCache.stats.hits).toBe(hits + 1);
  });

  test('a count with warm false loads no full rows; a mailbox the list view holds is counted from it, exactly', async () => {
    const fresh = new PgStore(db.knex, { listCacheRows: 1000 });
    const want = await plain.countMessages(user.id, mailboxId);
    expect(await fresh.countMessages(user.id, mailboxId, { warm: false })).toEqual(want);
    await fresh.listCache.settle();
    expect(fresh.listCache.has(user.id, mailboxId)).toBe(false);
    expect(fresh.listCache.stats.loads).toBe(0);
    // An IMAP session's SELECT reads the list view: the counts come from its rows, no SQL.
    await fresh.scanList(user.id, byName('INBOX'));
    const statements = [];
    const onQuery = (q) => statements.push(q.sql);
    db.knex.on('query', onQuery);
    try {
      expect(await fresh.countMessages(user.id, mailboxId, { warm: false })).toEqual(want);
      expect(await fresh.countMessages(user.id, byName('INBOX'), { warm: false })).toEqual(want);
    } finally {
      db.knex.removeListener('query', onQuery);
    }
    // each count checks the mailbox's modseq (rowsOf), none counts the partition
    expect(statements.filter((s) => /count\(\*\)/.test(s))).toEqual([]);
    // ...and stays exact when another session changes the mailbox
    const unseen = (await plain.scanHeaders(user.id, mailboxId))
      .filter((r) => !r.flags.includes('\\Seen'))
      .map((r) => r.uid);
    await other.setFlags(user.id, mailboxId, { uids: unseen.slice(0, 3), add: ['\\Seen'] });
    try {
      const now = await plain.countMessages(user.id, mailboxId);
      expect(now.unseen).toBe(want.unseen - 3);
      expect(await fresh.countMessages(user.id, mailboxId, { warm: false })).toEqual(now);
    } finally {
      await other.setFlags(user.id, mailboxId, { uids: unseen.slice(0, 3), remove: ['\\Seen'] });
    }
    expect(fresh.listCache.has(user.id, mailboxId)).toBe(false);
  });

  test('concurrent scans of a mailbox not cached yet share one full read (a SELECT counts and lists at once)', async () => {
    const fresh = new PgStore(db.knex, { listCacheRows: 1000 });
    const [a, b, c] = await Promise.all([
      fresh.scanHeaders(user.id, mailboxId),
      fresh.scanHeaders(user.id, mailboxId),
      fresh.scanHeaders(user.id, mailboxId, { order: 'desc' }),
    ]);
    expect(fresh.listCache.stats.loads).toBe(1);
    const want = await plain.scanHeaders(user.id, mailboxId);
    expect(a).toEqual(want);
    expect(b).toEqual(want);
    expect(c).toEqual([...want].reverse());
  });

  test('scanPage (the API path) pages from the cache in uid and date order, as SQL does', async () => {
    const a = await cached.scanPage(user.id, mailboxId, { limit: 10, after: { uid: 5 } });
    const b = await plain.scanPage(user.id, mailboxId, { limit: 10, after: { uid: 5 } });
    expect(a.rows).toEqual(b.rows);
    expect(a.next.uid).toBe(b.next.uid);
    const c = await cached.scanPage(user.id, mailboxId, { limit: 10, order: 'date', desc: true });
    const d = await plain.scanPage(user.id, mailboxId, { limit: 10, order: 'date', desc: true });
    expect(c).toEqual(d);
  });

  test('date-order pages with their total come from the cached rows and equal SQL, cursor by cursor', async () => {
    // Dates with ties (uid decides), one without a Date header (INTERNALDATE decides), out of
    // uid order; then another session's changes between pages.
    const dates = [
      'Tue, 05 Mar 2002 10:00:00 +0000',
      'Mon, 04 Mar 2002 09:00:00 +0000',
      'Tue, 05 Mar 2002 10:00:00 +0000',
      null,
      'Wed, 06 Mar 2002 11:30:00 -0500',
      'Mon, 04 Mar 2002 09:00:00 +0000',
      'Sun, 03 Mar 2002 08:00:00 +0100',
    ];
    const messages = [];
    for (let i = 0; i < 21; i++) {
      messages.push(msg({ subject: `Dated ${i}`, date: dates[i % dates.length], body: `${i}\n` }));
    }
    await importMessages(other, path.join(ctx.tmp, 'dates.mbox'), {
      messages,
      user: 'lc',
      mailbox: 'Dates',
    });
    const box = (await plain.getMailbox(user.id, 'Dates')).id;
    await cached.scanHeaders(user.id, box); // cached
    const walk = async (store, desc, limit) => {
      const pages = [];
      let after = null;
      for (;;) {
        const p = await store.scanPage(user.id, box, {
          limit,
          order: 'date',
          desc,
          after,
          withTotal: true,
        });
        pages.push(p);
        if (!p.next) return pages;
        after = p.next;
      }
    };
    for (const desc of [false, true]) {
      for (const limit of [1, 4, 50]) {
        const hits = cached.listCache.stats.hits;
        const a = await walk(cached, desc, limit);
        expect(a).toEqual(await walk(plain, desc, limit));
        expect(cached.listCache.stats.hits).toBe(hits + a.length); // no SQL page
      }
    }
    // A cursor from the SQL path pages the cache path, and the other way round.
    const s = await plain.scanPage(user.id, box, { limit: 5, order: 'date', withTotal: true });
    const c = await cached.scanPage(user.id, box, { limit: 5, order: 'date', withTotal: true });
    expect(c).toEqual(s);
    const next = { limit: 5, order: 'date', after: s.next, withTotal: true };
    expect(await cached.scanPage(user.id, box, next)).toEqual(
      await plain.scanPage(user.id, box, next),
    );
    // A cursor date the cache cannot compare as text is paged by SQL, with the same answer.
    const odd = { ...next, after: { uid: s.next.uid, date: '2002-03-05T10:00:00Z' } };
    expect(await cached.scanPage(user.id, box, odd)).toEqual(
      await plain.scanPage(user.id, box, odd),
    );
    // Another session's changes: a flag change, an expunge, an append, then date pages again.
    const uids = (await plain.scanHeaders(user.id, box)).map((r) => r.uid);
    await other.setFlags(user.id, box, { uids: uids.slice(0, 3), add: ['\\Seen'] });
    await other.expunge(user.id, box, { uids: uids.slice(5, 7), force: true });
    expect(await walk(cached, true, 4)).toEqual(await walk(plain, true, 4));
  });

  test('memory is bounded: the least recently used mailbox is evicted past the row budget', async () => {
    const small = new PgStore(db.knex, { listCacheRows: 100 });
    await importFile('c.mbox', 71, 120); // 50 more in INBOX: 116 rows > 100, never cached
    const second = await other.ensureMailbox(user.id, 'Other');
    await small.scanHeaders(user.id, mailboxId);
    expect(small.listCache.rows).toBe(0);
    // A mailbox known to exceed the budget is counted by SQL, not by a full read each time.
    expect(small.listCache.usable(user.id, mailboxId)).toBe(false);
    expect(await small.countMessages(user.id, mailboxId)).toEqual(
      await plain.countMessages(user.id, mailboxId),
    );
    await small.scanHeaders(user.id, second.id);
    expect(small.listCache.rows).toBeLessThanOrEqual(100);
    const s2 = new PgStore(db.knex, { listCacheRows: 150 });
    await s2.scanHeaders(user.id, mailboxId); // 116 rows
    await s2.scanHeaders(user.id, second.id); // 0 rows
    expect(s2.listCache.rows).toBe(116);
    expect(s2.listCache.entries.size).toBe(2);
  });

  test('thread ids the thread stage changes reach cached rows (it stamps a modseq)', async () => {
    const write = (name, m) =>
      importMessages(other, path.join(ctx.tmp, name), {
        messages: [m],
        user: 'lc',
        mailbox: 'Threads',
      });
    await write('r2.mbox', msg({ subject: 'Re: plan', headers: ['Message-ID: <r2@x>'] }));
    const box = await plain.getMailbox(user.id, 'Threads');
    const [right] = await plain.scanHeaders(user.id, box.id);
    // A thread id the thread stage will correct (as when a later message merges threads),
    // loaded into the cache first.
    await db
      .knex('messages')
      .where({ user_id: user.id, mailbox_id: box.id })
      .update({ thread_id: 'stale' });
    expect((await cached.scanHeaders(user.id, box.id))[0].threadId).toBe('stale');
    const r = await other.assignThreads(user.id);
    expect(r.updated).toBeGreaterThanOrEqual(1);
    const rows = await cached.scanHeaders(user.id, box.id);
    expect(rows).toEqual(await plain.scanHeaders(user.id, box.id));
    expect(rows[0].threadId).toBe(right.threadId);
    // A first thread id (new mail) stamps no row, only the mailbox: the cache reloads.
    await db
      .knex('messages')
      .where({ user_id: user.id, mailbox_id: box.id })
      .update({ thread_id: null });
    const fresh = new PgStore(db.knex, { listCacheRows: 1000 });
    expect((await fresh.scanHeaders(user.id, box.id))[0].threadId).toBeNull();
    expect((await other.assignThreads(user.id)).updated).toBeGreaterThanOrEqual(1);
    const again = await fresh.scanHeaders(user.id, box.id);
    expect(again).toEqual(await plain.scanHeaders(user.id, box.id));
    expect(again[0].threadId).toBe(right.threadId);
  });

  test('the list view: cached, uncached and by name equal the projection of the full rows, to the millisecond', async () => {
    const box = await other.ensureMailbox(user.id, 'Dates');
    await importMessages(other, path.join(ctx.tmp, 'dates.mbox'), {
      messages: [
        msg({ subject: 'no date', date: null }),
        msg({ subject: 'before 1970', date: 'Wed, 31 Dec 1969 23:59:59 +0000' }),
        msg({ subject: 'plain', headers: ['Status: RO'] }),
      ],
      user: 'lc',
      mailbox: 'Dates',
    });
    // Instants the driver parses with a fraction of a millisecond (truncated, both sides).
    const uids = (await plain.scanHeaders(user.id, box.id)).map((r) => r.uid);
    await db
      .knex('messages')
      .where({ user_id: user.id, mailbox_id: box.id, uid: uids[0] })
      .update({ internal_date: '1969-12-31T23:59:59.999999Z', date: null });
    await db
      .knex('messages')
      .where({ user_id: user.id, mailbox_id: box.id, uid: uids[1] })
      .update({ internal_date: '2001-05-06T07:08:09.123789Z', has_attachments: true });
    // Rows edited behind the store's back (no modseq): the snapshot the import wrote is stale
    // by construction, and no store path can make it so. Dropped.
    await db.knex('list_snapshots').where({ user_id: user.id, mailbox_id: box.id }).del();
    const want = (await plain.scanHeaders(user.id, box.id)).map(listRowOf);
    expect(want[0].date).toBeNull();
    expect(want[0].internalDate).toBe('1969-12-31T23:59:59.999Z');
    expect(want[1].internalDate).toBe('2001-05-06T07:08:09.123Z');
    expect(Object.keys(want[2])).toEqual([
      'uid',
      'from',
      'subject',
      'date',
      'internalDate',
      'size',
      'flags',
      'keywords',
      'hasAttachments',
      'modseq',
    ]);
    const fresh = new PgStore(db.knex, { listCacheRows: 1000 });
    expect(await fresh.scanList(user.id, box.id)).toEqual(want);
    expect(await fresh.scanList(user.id, byName('Dates'))).toEqual(want);
    expect(fresh.listViewCache.stats.hits).toBe(1);
    // Nothing of the full rows is held for it.
    expect(fresh.listCache.rows).toBe(0);
    expect(await plain.scanList(user.id, box.id)).toEqual(want);
    expect(await plain.scanList(user.id, byName('Dates'))).toEqual(want);
    await expect(plain.scanList(user.id, byName('No such'))).rejects.toMatchObject({
      code: 'MAILBOX_NOT_FOUND',
    });
    await expect(fresh.scanList(user.id, byName('No such'))).rejects.toMatchObject({
      code: 'MAILBOX_NOT_FOUND',
    });
  });

  test('a deleted mailbox is dropped from the cache', async () => {
    const mb = await other.ensureMailbox(user.id, 'Gone');
    await cached.scanHeaders(user.id, mb.id);
    expect(cached.listCache.entries.has(`${user.id}:${mb.id}`)).toBe(true);
    await db.knex('mailboxes').where({ user_id: user.id, id: mb.id }).del();
    expect(await cached.scanHeaders(user.id, mb.id)).toEqual([]);
    expect(cached.listCache.entries.has(`${user.id}:${mb.id}`)).toBe(false);
  });

  describe('the list view snapshot (list_snapshots): a store started with empty memory', () => {
    let snapId;
    let importedSnapshot;
    // A store just started: nothing in memory.
    const fresh = () => new PgStore(db.knex, { listCacheRows: 1000 });
    const snapshotRow = (id = snapId) =>
      db.knex('list_snapshots').where({ user_id: user.id, mailbox_id: id }).first();
    const mailboxRow = (id = snapId) =>
      db.knex('mailboxes').where({ user_id: user.id, id }).first();
    // The list view of a fresh store, which must equal the uncached SQL answer; its stats.
    const coldList = async (ref = snapId, store = fresh()) => {
      const got = await store.scanList(user.id, ref);
      expect(got).toEqual(await plain.scanList(user.id, ref));
      await store.settleBackground();
      return { got, stats: store.listViewCache.stats };
    };

    beforeAll(async () => {
      // The sessions above write snapshots of their own in the background.
      await Promise.all([cached, other].map((s) => s.settleBackground()));
      await other.ensureMailbox(user.id, 'Snap');
      const messages = [];
      for (let i = 1; i <= 30; i++) {
        // Rows JSON must round-trip: no From, no Date, no Subject, non-ASCII, quotes.
        const o = { subject: `Snap ${i} "quoted" é ☃`, body: `Body ${i}\n` };
        if (i === 2) o.from = null;
        if (i === 3) o.date = null;
        if (i === 4) o.subject = null;
        messages.push(msg(o));
      }
      await importMessages(other, path.join(ctx.tmp, 'snap.mbox'), {
        messages,
        user: 'lc',
        mailbox: 'Snap',
      });
      snapId = (await plain.getMailbox(user.id, 'Snap')).id;
      // The import wrote the snapshot as its last step (checked in the next test); removed so
      // that the tests after it start from a mailbox that has none.
      importedSnapshot = await snapshotRow();
      await db.knex('list_snapshots').where({ user_id: user.id, mailbox_id: snapId }).del();
    });

    test('the import writes the snapshot as its last step: the first open after it reads one row', async () => {
      const mb = await mailboxRow();
      expect(importedSnapshot).toMatchObject({ format: LIST_FORMAT, rows: 30 });
      expect([importedSnapshot.modseq, importedSnapshot.uidvalidity]).toEqual([
        mb.highestmodseq,
        mb.uidvalidity,
      ]);
      expect(JSON.parse(importedSnapshot.body).map(unpackListRow)).toEqual(
        await plain.scanList(user.id, snapId),
      );
      // Not kept in the importing store's memory: the serving process is usually another one.
      expect(other.listViewCache.has(user.id, snapId)).toBe(false);
      await db.knex('list_snapshots').insert(importedSnapshot);
      try {
        const { stats } = await coldList();
        expect(stats).toMatchObject({ loads: 1, snapshots: 1, saved: 0 });
      } finally {
        await db.knex('list_snapshots').where({ user_id: user.id, mailbox_id: snapId }).del();
      }
      // Over the budget: none written, and the rows are not read.
      const small = new PgStore(db.knex, { listCacheRows: 10 });
      expect(await small.writeListSnapshot(user.id, snapId)).toBe(false);
      expect(small.listViewCache.stats.loads).toBe(0);
      expect(await snapshotRow()).toBeUndefined();
      // Without a list view cache: nothing to write.
      expect(await plain.writeListSnapshot(user.id, snapId)).toBe(false);
    });

    test('a full SQL load writes the snapshot in the background, settled by settleBackground', async () => {
      expect(await snapshotRow()).toBeUndefined();
      const s = fresh();
      const list = await s.scanList(user.id, snapId);
      // Not written on the request's path: the write is still to come.
      expect(s.listViewCache.saves.size).toBe(1);
      expect(s.listViewCache.stats).toMatchObject({ loads: 1, snapshots: 0, saved: 0 });
      await s.settleBackground();
      expect(s.listViewCache.saves.size).toBe(0);
      expect(s.listViewCache.stats).toMatchObject({ saved: 1, saveErrors: 0 });
      const row = await snapshotRow();
      const mb = await mailboxRow();
      expect(row).toMatchObject({ format: LIST_FORMAT, rows: 30 });
      expect([row.modseq, row.uidvalidity]).toEqual([mb.highestmodseq, mb.uidvalidity]);
      // Each row stored packed (an array), and unpacked to the very row.
      expect(JSON.parse(row.body)).toEqual(list.map(packListRow));
      expect(JSON.parse(row.body).map(unpackListRow)).toEqual(list);
      // A mailbox over the cache budget is never cached, so never snapshotted.
      const small = new PgStore(db.knex, { listCacheRows: 10 });
      await small.scanList(user.id, snapId);
      expect(small.listViewCache.saves.size).toBe(0);
      await small.settleBackground();
      expect(small.listViewCache.stats.saved).toBe(0);
    });

    test('a fresh store serves the list view from the snapshot, equal to SQL', async () => {
      const { got, stats } = await coldList();
      expect(stats).toMatchObject({ loads: 1, snapshots: 1, saved: 0 });
      expect(got).toHaveLength(30);
      expect(Object.isFrozen(got[0])).toBe(true);
      expect(got.map((r) => r.from === null)).toContain(true);
      expect(got.map((r) => r.date === null)).toContain(true);
      // By name too (the name resolved in its own statement, as always).
      const { got: byName2, stats: s2 } = await coldList(byName('Snap'));
      expect(byName2).toEqual(got);
      expect(s2.snapshots).toBe(1);
    });

    test("another session's flag change, append, expunge, restore, rename, then hide+purge: the fresh store's answer equals SQL", async () => {
      const uids = (await plain.scanList(user.id, snapId)).map((r) => r.uid);
      // Each of these is the snapshot caught up by a delta (a small one: no new snapshot).
      await other.setFlags(user.id, snapId, { uids: uids.slice(0, 3), add: ['\\Seen', '$X'] });
      let r = await coldList();
      expect(r.stats).toMatchObject({ loads: 1, snapshots: 1 });
      expect(r.got[0].flags).toContain('\\Seen');
      await importMessages(other, path.join(ctx.tmp, 'snap2.mbox'), {
        messages: [msg({ subject: 'Snap 31' }), msg({ subject: 'Snap 32' })],
        user: 'lc',
        mailbox: 'Snap',
      });
      // except the import, which writes its own as its last step
      const at = (await snapshotRow()).modseq;
      expect(at).toBe((await mailboxRow()).highestmodseq);
      r = await coldList();
      expect(r.stats.snapshots).toBe(1);
      expect(r.got).toHaveLength(32);
      await other.setFlags(user.id, snapId, { uids: uids.slice(6, 8), add: ['\\Deleted'] });
      const gone = await other.expunge(user.id, snapId, {});
      expect(gone.expunged).toHaveLength(2);
      r = await coldList();
      expect(r.stats.snapshots).toBe(1);
      expect(r.got).toHaveLength(30);
      await other.restoreExpunged(user.id, snapId, gone.expunged);
      r = await coldList();
      expect(r.stats.snapshots).toBe(1);
      expect(r.got).toHaveLength(32);
      // A rename keeps the mailbox's id, UIDVALIDITY and rows. (With an Elasticsearch mirror,
      // as in CI, the store restamps every row so the mirror re-ships them under the new name:
      // that delta is the whole list and the load goes to SQL. The renames here are made by a
      // store without the outbox, so the test means the same thing in both places.)
      const renamer = new PgStore(db.knex, { listCacheRows: 0, outbox: false });
      await renamer.renameMailbox(user.id, 'Snap', 'Snap2');
      expect((await plain.getMailbox(user.id, 'Snap2')).id).toBe(snapId);
      r = await coldList(byName('Snap2'));
      expect(r.stats.snapshots).toBe(1);
      await renamer.renameMailbox(user.id, 'Snap2', 'Snap');
      expect((await snapshotRow()).modseq).toBe(at); // none of these wrote a snapshot
      // A hide and its purge both since the snapshot: the count check sends it to SQL, which
      // writes a new snapshot.
      await other.expunge(user.id, snapId, { uids: uids.slice(10, 12), force: true });
      await other.purgeExpunged(user.id, snapId, { graceMs: 0 });
      r = await coldList();
      expect(r.stats).toMatchObject({ loads: 1, snapshots: 0, saved: 1 });
      expect(r.got).toHaveLength(30);
      expect((await snapshotRow()).modseq).toBe((await mailboxRow()).highestmodseq);
      r = await coldList();
      expect(r.stats.snapshots).toBe(1);
    });

    test('a snapshot of another format or UIDVALIDITY is not used: the rows are read by SQL', async () => {
      const other2 = fresh();
      other2.listViewCache.persist.format = LIST_FORMAT + 1; // as after a change of listRow's shape
      let r = await coldList(snapId, other2);
      expect(r.stats).toMatchObject({ loads: 1, snapshots: 0, saved: 1 });
      // Replaced at the same modseq (another format), and read back by that format only.
      expect((await snapshotRow()).format).toBe(LIST_FORMAT + 1);
      r = await coldList();
      expect(r.stats).toMatchObject({ snapshots: 0, saved: 1 });
      expect((await snapshotRow()).format).toBe(LIST_FORMAT);
      expect((await coldList()).stats.snapshots).toBe(1);
      // A new UIDVALIDITY (the uids of the snapshot mean nothing any more).
      await db
        .knex('mailboxes')
        .where({ user_id: user.id, id: snapId })
        .increment('uidvalidity', 1);
      r = await coldList();
      expect(r.stats).toMatchObject({ loads: 1, snapshots: 0, saved: 1 });
      expect((await snapshotRow()).uidvalidity).toBe((await mailboxRow()).uidvalidity);
      expect((await coldList()).stats.snapshots).toBe(1);
    });

    test('the snapshot body is JSON.stringify of the rows, however many slices it is built in', async () => {
      const { jsonInSlices } = require('../lib/list-cache');
      const rows = (await plain.scanList(user.id, snapId)).slice(0, 3);
      const many = Array.from({ length: 2501 }, (_, i) => ({ ...rows[i % 3], uid: i + 1 }));
      for (const list of [[], rows, many.slice(0, 1000), many]) {
        expect(await jsonInSlices(list)).toBe(JSON.stringify(list));
        expect(await jsonInSlices(list, packListRow)).toBe(JSON.stringify(list.map(packListRow)));
      }
    });

    test('a snapshot whose rows cannot be unpacked is not used: the rows are read by SQL', async () => {
      const row = await snapshotRow();
      const body = JSON.parse(row.body);
      body[1] = body[1].slice(0, 10);
      await db
        .knex('list_snapshots')
        .where({ user_id: user.id, mailbox_id: snapId })
        .update({ body: JSON.stringify(body) });
      try {
        const r = await coldList();
        expect(r.stats).toMatchObject({ loads: 1, snapshots: 0 });
      } finally {
        await db
          .knex('list_snapshots')
          .where({ user_id: user.id, mailbox_id: snapId })
          .update({ body: row.body });
      }
      expect((await coldList()).stats.snapshots).toBe(1);
    });

    test('a deleted mailbox leaves no snapshot row, even with a write racing the delete', async () => {
      await other.ensureMailbox(user.id, 'SnapGone');
      await importMessages(other, path.join(ctx.tmp, 'gone.mbox'), {
        messages: [msg({ subject: 'gone 1' }), msg({ subject: 'gone 2' })],
        user: 'lc',
        mailbox: 'SnapGone',
      });
      const id = (await plain.getMailbox(user.id, 'SnapGone')).id;
      await coldList(id);
      expect(await snapshotRow(id)).toBeTruthy();
      await other.deleteMailbox(user.id, 'SnapGone');
      expect(await snapshotRow(id)).toBeUndefined();
      // A load whose background write meets the delete: the write fails quietly.
      await other.ensureMailbox(user.id, 'SnapGone');
      const id2 = (await plain.getMailbox(user.id, 'SnapGone')).id;
      const s = fresh();
      await s.scanList(user.id, id2);
      await other.deleteMailbox(user.id, 'SnapGone');
      await s.settleBackground();
      expect(await snapshotRow(id2)).toBeUndefined();
    });
  });
});
