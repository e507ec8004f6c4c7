'use strict';

const { useServiceSuite, statementsDuring } = require('@mailgate/test-support/db');
const { msg } = require('@mailgate/test-support/mail');

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
      // BEGIN, the locks and uids, the thread lookups (one per step of link distance, one
      // for the subject's root sets), the insert of every row, COMMIT. It was 11 statements
      // plus the same lookups.
      expect(c - b + 1).toBeLessThanOrEqual(7);
      // No statement counts or lists the mailbox.
      expect(sql.filter((q) => /count\(/i.test(q) && !/WITH m AS/.test(q))).toEqual([]);
    }
    expect(later.result.uid).toBe(121);
    // Thread ids written with the rows are the full computation's.
    expect((await service.store.assignThreads(userId)).updated).toBe(0);
  });

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
});
