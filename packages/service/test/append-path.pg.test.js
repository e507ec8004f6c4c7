'use strict';

const { useServiceSuite, statementsDuring } = require('@mailgate/test-support/db');
const { msg } = require('@mailgate/test-support/mail');
const { MERGE_AFTER } = require('../lib/index-upkeep');
const { onCitus, singlePostgresOnly } = require('@mailgate/test-support/skip');
const { PgStore, byName, openDatabase } = require('@mailgate/store');
const { deriveRow } = require('@mailgate/importer');

/*
 * The one write of a new message (issue 32.4; store append-ops.js), through the pg backend's
 * append that LMTP, `mailgate deliver`, IMAP APPEND and the HTTP append all call: a fixed,
 * small number of statements whatever the mailbox holds, and concurrent appends committed
 * together (group commit) with uids in arrival order, each message stored exactly once.
 */
describe('append path: statements and group commit', () => {
  const ctx = useServiceSuite('append-path');
  let service;
  let be;
  let knex;
  let userId;

  beforeAll(async () => {
    ({ service } = ctx);
    knex = service.store.knex;
    const u = await service.users.create('dora', {});
    userId = u.id;
    be = await service.openBackend('pg', 'dora');
    await be.createMailbox('INBOX');
  });

  /** The SQL statements a step sends. */
  const statements = (step) => statementsDuring(knex, step);

  const begins = (sql) => sql.filter((q) => /^BEGIN/i.test(q)).length;

  test('an append is one short transaction, the same into a full mailbox as into an empty one', async () => {
    // Twelve threads of ten; replies name their root and parent, as mail clients write them.
    const one = (i) =>
      msg({
        subject: i % 10 ? `Re: topic ${Math.floor(i / 10)}` : `topic ${Math.floor(i / 10)}`,
        headers: [
          `Message-ID: <p${i}@x>`,
          ...(i % 10 ? [`References: <p${i - (i % 10)}@x> <p${i - 1}@x>`] : []),
        ],
      });
    const first = await statements(() => be.append('INBOX', one(0), {}));
    for (let i = 1; i < 120; i++) await be.append('INBOX', one(i), {});
    const later = await statements(() => be.append('INBOX', one(120), {}));
    for (const { sql } of [first, later]) {
      const b = sql.findIndex((q) => /^BEGIN/i.test(q));
      const c = sql.findIndex((q) => /^COMMIT/i.test(q));
      expect(b).toBeGreaterThanOrEqual(0);
      // BEGIN, the locks, the uids and the next occurrence index of the bytes (one statement),
      // the thread lookups (one per step of link distance; the new message's own subject key
      // read with the first), the insert of every row, COMMIT. It was 7 (the occurrence index
      // and the subject key each a statement of their own), and 11 before that. On Citus one
      // more: the store's pg_notify for IDLE sessions, where the mailboxes trigger that does it
      // on a single PostgreSQL cannot run (store citus.js).
      expect(c - b + 1).toBeLessThanOrEqual(onCitus() ? 6 : 5);
      // No statement counts or lists the mailbox.
      expect(sql.filter((q) => /count\(/i.test(q) && !/WITH m AS/.test(q))).toEqual([]);
    }
    expect(later.result.uid).toBe(121);
    // Thread ids written with the rows are the full computation's.
    expect((await service.store.assignThreads(userId)).updated).toBe(0);
  });

  test('a delivery reads nothing outside its transaction; the route is checked inside it', async () => {
    const u = await service.users.create('rita', {});
    const rb = await service.openBackend('pg', 'rita');
    await rb.createMailbox('INBOX');
    await rb.close();
    const rcpt = await service.delivery.resolve('rita@example.test');
    const mail = (i) => msg({ subject: `delivered ${i}`, headers: [`Message-ID: <d${i}@x>`] });
    const { result, sql } = await statements(() => service.delivery.deliver(rcpt, mail(1)));
    expect(result.uid).toBe(1);
    // The recipient was resolved at RCPT (one read of the user row, route included); the
    // delivery itself is BEGIN … COMMIT only: no second read of the route before it.
    expect(sql.findIndex((q) => /^BEGIN/i.test(q))).toBe(0);
    expect(sql.filter((q) => /"users"/.test(q))).toEqual([]);
    // A cutover started meanwhile (route `proxy`): the allocating statement refuses it, and
    // nothing is stored or allocated.
    await service.store.setRoute('rita', 'proxy');
    await expect(service.delivery.deliver(rcpt, mail(2))).rejects.toMatchObject({
      code: 'MAILBOX_MIGRATING',
    });
    const mb = await service.store.getMailbox(u.id, 'INBOX');
    expect(Number(mb.uidnext)).toBe(2);
    await service.store.setRoute('rita', 'store');
    expect((await service.delivery.deliver(rcpt, mail(3))).uid).toBe(2);
  });

  // The user's own GIN indexes (ginIndexes of their partitions): on Citus there are none.
  const perUser = singlePostgresOnly(
    __filename,
    "a user's own GIN indexes (on Citus the shards' indexes are shared and the workers' to keep)",
    'GIN pending lists merged in the background',
  )
    ? test.skip
    : test;
  perUser(
    "new mail's GIN pending lists are merged in the background, never by a later delivery",
    async () => {
      const u = await service.users.create('gina', {});
      const gb = await service.openBackend('pg', 'gina');
      await gb.createMailbox('INBOX');
      // Text unlike its neighbours, so each message adds entries to every index's pending list.
      const words = (i) =>
        Array.from({ length: 9000 }, (_, j) => `w${(i * 7919 + j * 104729) % 999983}`).join(' ');
      /** Pending-list pages per table (merging them: gin_clean_pending_list answers the count). */
      const pending = async () => {
        const out = {};
        for (const { name, tbl } of await service.store.ginIndexes(u.id)) {
          const r = await knex.raw('SELECT gin_clean_pending_list(?::regclass) AS n', [name]);
          const t = tbl.replace(/_u\d+$/, '');
          out[t] = (out[t] || 0) + Number(r.rows[0].n);
        }
        return out;
      };
      try {
        // Mail past the words' share (MERGE_AFTER): their merge is queued after the commit of
        // the append that passed it, and runs beside the appends. (The text pieces had the
        // largest lists until their trigram index was dropped, 20261203310100_word_vocabulary.js.)
        let bytes = 0;
        for (let i = 0; bytes < MERGE_AFTER.message_words; i++) {
          const raw = msg({ subject: `long ${i}`, body: `${words(i)}\n` });
          bytes += Buffer.byteLength(raw);
          await gb.append('INBOX', raw, {});
        }
        await service.indexUpkeep.idle();
        expect(service.indexUpkeep.runs).toBeGreaterThan(0);
        const left = await pending();
        // Nothing left there for an insert to merge; the header columns' lists, far from their
        // limit, wait for a larger merge (a merge costs per distinct key: later is cheaper).
        expect(left.message_words).toBe(0);
        // The vocabulary's trigram index too (every word of this mail is new to it): a
        // substring search reads its pending list whole until it is merged.
        expect(left.message_vocab).toBe(0);
        expect(left.messages).toBeGreaterThan(0);
      } finally {
        await gb.close();
      }
    },
  );

  perUser(
    "an append never merges the words' pending list at PostgreSQL's default limit (4 MB)",
    async () => {
      // The store alone (no upkeep): only an insert's own merge could empty the list.
      const u = await service.users.create('gino', {});
      const gb = await service.openBackend('pg', 'gino');
      await gb.createMailbox('INBOX');
      await gb.close();
      const inbox = await service.store.getMailbox(u.id, 'INBOX');
      const [wordsGin] = (await service.store.ginIndexes(u.id))
        .filter((x) => /^message_words_u\d+$/.test(x.tbl))
        .map((x) => x.name);
      const merge = async () =>
        Number(
          (await knex.raw('SELECT gin_clean_pending_list(?::regclass) AS n', [wordsGin])).rows[0].n,
        );
      const words = (i) =>
        Array.from({ length: 6000 }, (_, j) => `v${(i * 7919 + j * 104729) % 999983}`).join(' ');
      const append = (i) => {
        const raw = msg({ subject: `pending ${i}`, body: `${words(i)}\n` });
        return service.store.appendMessage(u.id, inbox.id, { raw, row: deriveRow(raw).row });
      };
      // Pages one such message adds to an empty list, then enough messages for 560-1,000
      // pages: past the default limit (512 pages of 8 kB), under twice it.
      await append(0);
      const per = await merge();
      expect(per).toBeGreaterThan(0);
      const n = Math.ceil(600 / per);
      expect(n * per).toBeLessThan(1000);
      for (let i = 1; i <= n; i++) await append(i);
      // An insert that had merged the list at 512 pages would have left fewer than 512.
      expect(await merge()).toBeGreaterThan(512);
    },
  );

  test('concurrent appends share commits; each stored once under the uid it was answered', async () => {
    await be.createMailbox('Burst');
    const raws = Array.from({ length: 24 }, (_, i) =>
      msg({ subject: `burst ${i}`, headers: [`Message-ID: <b${i}@x>`], body: `burst body ${i}\n` }),
    );
    const { result, sql } = await statements(() =>
      Promise.all(raws.map((r) => be.append('Burst', r, {}))),
    );
    // The user's gate lets a few appends in at a time, in any order: the uids are 1..24, each
    // once, and each message is stored under the uid its append answered.
    const uids = result.map((r) => r.uid);
    expect([...uids].sort((a, b) => a - b)).toEqual(raws.map((_, i) => i + 1));
    // The first append commits alone; the 23 that arrived meanwhile go in far fewer.
    expect(begins(sql)).toBeLessThan(raws.length / 2);
    const stored = [];
    for await (const m of be.scanRaw('Burst')) stored.push(m.raw.toString('latin1'));
    const byUid = [];
    uids.forEach((u, i) => (byUid[u - 1] = Buffer.from(raws[i]).toString('latin1')));
    expect(stored).toEqual(byUid);
    const st = await be.status('Burst');
    expect(st.uidnext).toBe(25);
  });

  test('the same bytes appended together keep distinct occurrence indexes; replies in one batch share a thread', async () => {
    await be.createMailbox('Same');
    const raw = msg({ subject: 'same bytes', headers: ['Message-ID: <same@x>'] });
    const parent = msg({ subject: 'plan', headers: ['Message-ID: <t0@x>'] });
    const reply = (i) =>
      msg({ subject: 'Re: plan', headers: [`Message-ID: <t${i}@x>`, 'In-Reply-To: <t0@x>'] });
    const out = await Promise.all([
      ...Array.from({ length: 5 }, () => be.append('Same', raw, {})),
      be.append('Same', reply(1), {}),
      be.append('Same', parent, {}),
      be.append('Same', reply(2), {}),
    ]);
    expect(out.map((r) => r.uid).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const mb = await service.store.getMailbox(userId, 'Same');
    const rows = await knex('messages')
      .where({ user_id: userId, mailbox_id: mb.id })
      .select('uid', 'dup_index', 'thread_id');
    const at = (i) => rows.find((r) => Number(r.uid) === out[i].uid);
    expect(
      out
        .slice(0, 5)
        .map((_, i) => at(i).dup_index)
        .sort(),
    ).toEqual([0, 1, 2, 3, 4]);
    expect(new Set([5, 6, 7].map((i) => at(i).thread_id)).size).toBe(1);
    expect((await service.store.assignThreads(userId)).updated).toBe(0);
  });

  test('two processes append the same bytes while both wait for the lock: both stored, distinct occurrence indexes', async () => {
    // The occurrence index is read in the allocating statement, whose snapshot predates its
    // wait for the thread lock: the second writer misses the first's row, meets it on the
    // unique key, and its transaction runs again (store append-ops.js retryConflict).
    await be.createMailbox('Race');
    // A second process's store: its own pool and its own group commit queue.
    const db = await openDatabase({ databaseUrl: ctx.db.url }, { migrate: false, quiet: true });
    const other = new PgStore(db.knex);
    const holder = await knex.transaction();
    // The store's thread lock (thread-ops.js THREAD_LOCK, 'thrd'), which every append takes first.
    const THREAD_LOCK = 0x74687264;
    try {
      await holder.raw('SELECT pg_advisory_xact_lock(?, ?)', [THREAD_LOCK, userId]);
      const raw = Buffer.from(msg({ subject: 'twice', headers: ['Message-ID: <twice@x>'] }));
      const d = deriveRow(raw);
      const one = (store) =>
        store.appendMessage(userId, byName('Race'), { raw, row: d.row, flags: [], keywords: [] });
      let settled = false;
      const both = Promise.all([one(service.store), one(other)]).finally(() => (settled = true));
      // Both allocating statements wait for the lock (their snapshots taken), then it goes.
      const waiting = async () =>
        Number(
          (
            await knex.raw(
              `SELECT count(*) AS n FROM pg_stat_activity
                WHERE wait_event_type = 'Lock' AND query LIKE '%pg_advisory_xact_lock%UPDATE mailboxes%'`,
            )
          ).rows[0].n,
        );
      // (Settled before both waited: they did not wait for this lock; the checks below fail.)
      while (!settled && (await waiting()) < 2) await new Promise((r) => setTimeout(r, 20));
      await holder.commit();
      const out = await both;
      expect(out.map((r) => r.uid).sort((a, b) => a - b)).toEqual([1, 2]);
      const mb = await service.store.getMailbox(userId, 'Race');
      const rows = await knex('messages')
        .where({ user_id: userId, mailbox_id: mb.id })
        .orderBy('dup_index')
        .select('dup_index');
      expect(rows.map((r) => r.dup_index)).toEqual([0, 1]);
    } finally {
      if (!holder.isCompleted()) await holder.rollback();
      await db.close();
    }
  });
});
