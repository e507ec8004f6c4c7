'use strict';

const path = require('node:path');
const { PgStore, listRowOf, byName } = require('@mailgate/store');
const { useCliSuite } = require('./support/db');
const { msg, importMessages } = require('./support/mail');

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
});
