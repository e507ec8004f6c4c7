'use strict';

const path = require('node:path');
const { PgStore } = require('@mailgate/store');
const { likeEscape } = require('@mailgate/query');
const { useCliSuite, createTestDatabase } = require('@mailgate/test-support/db');
const { msg, importMessages } = require('@mailgate/test-support/mail');
const { userAsBefore } = require('./migration-user');
const { textOf } = require('../lib/chunks-sql');

/*
 * mailboxes.expunged_pending (migrations/20261126000000_expunged_pending.js): the number of a
 * mailbox's rows hidden by an expunge and not purged yet. While it is 0, a search that is one
 * word or substring term reads the side table (message_words, message_chunks) alone, without
 * a messages row per hit; so the count must be exact through every path that hides, shows
 * again or deletes a hidden row, also when those run at the same time, and searches must never
 * return a hidden message.
 */

function prng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('expunged_pending: exact count, searches never return hidden messages', () => {
  const ctx = useCliSuite('xp');
  let store;
  let user;
  const rand = prng(20261126);
  const pick = (xs, n) => xs.filter(() => rand() < n / Math.max(xs.length, 1));

  // Terms a search answers from a side table alone, and two it does not (a pattern longer than
  // the pieces' overlap; a term with a flag).
  const TERMS = [
    { type: 'word', value: 'alpha' },
    { type: 'phrase', value: 'gamma delta' },
    { type: 'substring', field: 'text', value: 'lpha be' },
    { type: 'substring', field: 'body', value: 'ta gam' },
    { type: 'substring', field: 'text', value: `alpha ${'x'.repeat(300)}` },
    {
      type: 'and',
      children: [
        { type: 'word', value: 'alpha' },
        { type: 'flag', flag: '\\Seen', negate: true },
      ],
    },
  ];

  // The reference answer: the messages rows themselves, hidden ones left out.
  const reference = async (mailboxId, ast) => {
    const k = ctx.db.knex;
    let cond;
    let args;
    if (ast.type === 'and') {
      const words = await reference(mailboxId, ast.children[0]);
      const unseen = await k.raw(
        `SELECT uid FROM messages WHERE user_id = ? AND mailbox_id = ? AND NOT expunged
            AND NOT ('\\Seen' = ANY(flags))`,
        [user.id, mailboxId],
      );
      const u = new Set(unseen.rows.map((x) => Number(x.uid)));
      return words.filter((x) => u.has(x));
    }
    if (ast.type === 'substring') {
      // The whole texts, read back from their pieces (the only place they are kept since
      // migrations/20261130610200_text_in_pieces_only.js; exact: message-chunks.test.js).
      const kinds = ast.field === 'body' ? [1] : [1, 0];
      cond = kinds.map((c) => `${textOf('m', c, user.id)} LIKE ?`).join(' OR ');
      args = kinds.map(() => `%${likeEscape(ast.value.toLowerCase())}%`);
    } else if (ast.type === 'word') {
      cond = `EXISTS (SELECT 1 FROM message_words w WHERE w.user_id = m.user_id
                 AND w.mailbox_id = m.mailbox_id AND w.uid = m.uid AND w.tsv @@ plainto_tsquery('simple', ?))`;
      args = [ast.value];
    } else {
      // The stored words have no positions (migrations/20261203240100_words_stripped.js): the
      // message's positioned words, computed again from its text as the insert trigger does.
      cond = `mailgate_words(m.subject, m.from_text || ' ' || m.to_text || ' ' || m.cc_text,
                 ${textOf('m', 1, user.id)}) @@ phraseto_tsquery('simple', ?)`;
      args = [ast.value];
    }
    const r = await k.raw(
      `SELECT m.uid FROM messages m WHERE m.user_id = ? AND m.mailbox_id = ? AND NOT m.expunged
          AND (${cond}) ORDER BY m.uid`,
      [user.id, mailboxId, ...args],
    );
    return r.rows.map((x) => Number(x.uid));
  };
  const search = async (name, ast) =>
    (await store.search(user.id, ast, { mailbox: { name } })).hits.map((h) => h.uid);
  const live = async (mailboxId) =>
    (
      await ctx.db.knex.raw(
        'SELECT uid FROM messages WHERE user_id = ? AND mailbox_id = ? AND NOT expunged ORDER BY uid',
        [user.id, mailboxId],
      )
    ).rows.map((x) => Number(x.uid));
  const hidden = async (mailboxId) =>
    (
      await ctx.db.knex.raw(
        'SELECT uid FROM messages WHERE user_id = ? AND mailbox_id = ? AND expunged ORDER BY uid',
        [user.id, mailboxId],
      )
    ).rows.map((x) => Number(x.uid));
  // The count against the rows, for every mailbox of the user.
  const checkCounts = async () => {
    const r = await ctx.db.knex.raw(
      `SELECT b.name, b.expunged_pending AS counted,
              (SELECT count(*) FROM messages m WHERE m.user_id = b.user_id AND m.mailbox_id = b.id
                  AND m.expunged)::int AS actual
         FROM mailboxes b WHERE b.user_id = ? ORDER BY b.name`,
      [user.id],
    );
    for (const row of r.rows)
      expect({ [row.name]: row.counted }).toEqual({ [row.name]: row.actual });
    return r.rows;
  };
  const checkSearches = async () => {
    for (const name of ['INBOX', 'Other']) {
      const mb = await store.getMailbox(user.id, name);
      for (const ast of TERMS) {
        expect({ name, ast, got: await search(name, ast) }).toEqual({
          name,
          ast,
          got: await reference(mb.id, ast),
        });
      }
    }
  };

  beforeAll(async () => {
    store = new PgStore(ctx.db.knex, { listCacheRows: 0 });
    const words = ['alpha', 'beta', 'gamma', 'delta', 'omega'];
    const messages = [];
    for (let i = 0; i < 80; i++) {
      const body = Array.from({ length: 12 }, () => words[Math.floor(rand() * words.length)]);
      if (i % 7 === 0) body.push('alpha', 'x'.repeat(300));
      messages.push(msg({ subject: `Note ${i}`, body: `${body.join(' ')}\n` }));
    }
    await importMessages(store, path.join(ctx.tmp, 'a.mbox'), {
      messages,
      user: 'xp',
      mailbox: 'INBOX',
    });
    user = await store.getUser('xp');
    await store.createMailbox(user.id, 'Other');
  });

  test('through expunge, restore, move and purge, in a random order, the count stays exact', async () => {
    const inbox = await store.getMailbox(user.id, 'INBOX');
    const other = await store.getMailbox(user.id, 'Other');
    const ids = { INBOX: inbox.id, Other: other.id };
    let sawPending = 0;
    let sawNone = 0;
    for (let step = 0; step < 40; step++) {
      const name = rand() < 0.7 ? 'INBOX' : 'Other';
      const id = ids[name];
      const op = Math.floor(rand() * 6);
      if (op === 0) {
        await store.setFlags(user.id, id, { uids: pick(await live(id), 8), add: ['\\Deleted'] });
        await store.expunge(user.id, id);
      } else if (op === 1) {
        const uids = pick(await live(id), 5);
        if (uids.length) await store.expunge(user.id, id, { uids, force: true });
      } else if (op === 2) {
        const uids = pick(await hidden(id), 3);
        if (uids.length) await store.restoreExpunged(user.id, id, uids);
      } else if (op === 3) {
        const to = name === 'INBOX' ? ids.Other : ids.INBOX;
        const uids = pick(await live(id), 4);
        if (uids.length) await store.copyMessages(user.id, id, uids, to, { move: true });
      } else if (op === 4) {
        await store.purgeExpunged(user.id, id, { batchSize: 3 });
      } else {
        await store.setFlags(user.id, id, { uids: pick(await live(id), 10), add: ['\\Seen'] });
      }
      const rows = await checkCounts();
      for (const r of rows) r.counted > 0 ? sawPending++ : sawNone++;
      await checkSearches();
    }
    // Both branches of the search were exercised.
    expect(sawPending).toBeGreaterThan(5);
    expect(sawNone).toBeGreaterThan(5);
  });

  test('concurrent expunges, restores, moves and purges keep the count exact', async () => {
    const inbox = await store.getMailbox(user.id, 'INBOX');
    const other = await store.getMailbox(user.id, 'Other');
    for (let round = 0; round < 6; round++) {
      const a = await live(inbox.id);
      const h = await hidden(inbox.id);
      await Promise.all([
        store.expunge(user.id, inbox.id, { uids: a.slice(0, 3), force: true }),
        store.restoreExpunged(user.id, inbox.id, h.slice(0, 4)),
        store.purgeExpunged(user.id, inbox.id, { batchSize: 2 }),
        store.copyMessages(user.id, inbox.id, a.slice(3, 5), other.id, { move: true }),
        store.purgeExpunged(user.id, other.id, { batchSize: 2 }),
        search('INBOX', TERMS[0]),
      ]);
      await checkCounts();
    }
    await checkSearches();
  });

  test('a purge skips a hidden row another transaction holds (no deadlock with a writer that locks rows before the mailbox)', async () => {
    // The import's thread stage gives first thread ids to rows (any hidden old one among
    // them) before it takes a mailbox lock; a purge takes the mailbox lock, then deletes.
    // Waiting for the row while holding the lock closed a cycle PostgreSQL broke by aborting
    // one side; the purge now leaves a locked row to its next run.
    // Fresh mail in a mailbox of its own: the tests above may have moved or expunged most.
    await importMessages(store, path.join(ctx.tmp, 'skip.mbox'), {
      messages: [1, 2, 3, 4].map((i) => msg({ subject: `Skip ${i}`, body: 'alpha\n' })),
      user: 'xp',
      mailbox: 'Skip',
    });
    const inbox = await store.getMailbox(user.id, 'Skip');
    const uids = (await live(inbox.id)).slice(0, 3);
    expect(uids).toHaveLength(3);
    await store.expunge(user.id, inbox.id, { uids, force: true });
    const k = ctx.db.knex;
    let purge;
    await k.transaction(async (trx) => {
      await trx.raw(
        'UPDATE messages SET thread_id = thread_id WHERE user_id = ? AND mailbox_id = ? AND uid = ?',
        [user.id, inbox.id, uids[0]],
      );
      purge = store.purgeExpunged(user.id, inbox.id);
      await new Promise((r) => setTimeout(r, 300)); // the purge holds the mailbox lock now
      await trx.raw('SELECT id FROM mailboxes WHERE user_id = ? AND id = ? FOR UPDATE', [
        user.id,
        inbox.id,
      ]);
    });
    expect(await purge).toBe(2);
    expect(await hidden(inbox.id)).toEqual([uids[0]]);
    await checkCounts();
    expect(await store.purgeExpunged(user.id, inbox.id)).toBe(1);
    expect(await hidden(inbox.id)).toEqual([]);
    await checkCounts();
  });

  test('at 0 the side table answers alone; a count above 0 makes the messages rows decide; a purge repairs a wrong count', async () => {
    // Fresh mail: the tests above may have moved or expunged most of it.
    await importMessages(store, path.join(ctx.tmp, 'b.mbox'), {
      messages: [1, 2, 3, 4, 5, 6, 7, 8].map((i) =>
        msg({ subject: `Fresh ${i}`, body: 'alpha beta\n' }),
      ),
      user: 'xp',
      mailbox: 'INBOX',
    });
    const inbox = await store.getMailbox(user.id, 'INBOX');
    await store.purgeExpunged(user.id, inbox.id);
    expect((await checkCounts()).find((r) => r.name === 'INBOX').counted).toBe(0);
    const k = ctx.db.knex;
    const hits = await search('INBOX', TERMS[0]);
    expect(hits.length).toBeGreaterThan(2);
    const pieces = await reference(inbox.id, TERMS[2]);
    const victim = hits.find((u) => pieces.includes(u));
    expect(victim).toBeDefined();
    const hide = (expunged, count) =>
      k.transaction(async (trx) => {
        await trx.raw(
          'UPDATE messages SET expunged = ? WHERE user_id = ? AND mailbox_id = ? AND uid = ?',
          [expunged, user.id, inbox.id, victim],
        );
        await trx.raw('UPDATE mailboxes SET expunged_pending = ? WHERE user_id = ? AND id = ?', [
          count,
          user.id,
          inbox.id,
        ]);
      });
    // A row hidden behind the count's back (what a path that forgot the count would leave):
    // the fast answer still lists it. This is why every such path is tested above.
    await hide(true, 0);
    try {
      expect(await search('INBOX', TERMS[0])).toEqual(hits);
      expect(await search('INBOX', TERMS[2])).toEqual(pieces);
      // Counted: the messages rows decide, and the hidden one is left out.
      await hide(true, 1);
      expect(await search('INBOX', TERMS[0])).toEqual(hits.filter((u) => u !== victim));
      expect(await search('INBOX', TERMS[2])).toEqual(pieces.filter((u) => u !== victim));
    } finally {
      await hide(false, 0);
    }
    // A count gone wrong is repaired by the next purge, which recounts under the lock: rows
    // hidden by hand (a process older than the count) are purged without the count going
    // below zero on the way, and an over-count is listed by pendingPurges and set right.
    const live0 = await live(inbox.id);
    expect(live0.length).toBeGreaterThanOrEqual(5);
    await k.raw(
      'UPDATE messages SET expunged = true WHERE user_id = ? AND mailbox_id = ? AND uid = ANY(?)',
      [user.id, inbox.id, live0.slice(0, 5)],
    );
    expect(await store.purgeExpunged(user.id, inbox.id, { batchSize: 2 })).toBe(5);
    expect((await checkCounts()).find((r) => r.name === 'INBOX').counted).toBe(0);
    await k.raw('UPDATE mailboxes SET expunged_pending = 7 WHERE user_id = ? AND id = ?', [
      user.id,
      inbox.id,
    ]);
    expect(await store.pendingPurges()).toContainEqual({ userId: user.id, mailboxId: inbox.id });
    expect(await store.purgeExpunged(user.id, inbox.id)).toBe(0);
    expect((await checkCounts()).find((r) => r.name === 'INBOX').counted).toBe(0);
    await checkSearches();
    // A count below zero is refused, not stored.
    await expect(
      k.raw(
        'UPDATE mailboxes SET expunged_pending = expunged_pending - 1 WHERE user_id = ? AND id = ?',
        [user.id, inbox.id],
      ),
    ).rejects.toThrow(/mailboxes_expunged_pending_check/);
  });
});

test('migration: hidden rows already in the database are counted on the way up', async () => {
  const db = await createTestDatabase();
  try {
    const k = db.knex;
    const name = { name: '20261126000000_expunged_pending.js' };
    await k.migrate.down(name);
    const { id, boxes } = await userAsBefore(k, {
      mailboxes: ['INBOX', 'Trash', 'Empty'],
      partitions: ['messages', 'message_words', 'message_vocab', 'message_chunks'],
    });
    const insert = (mb, uid, expunged) =>
      k.raw(
        `INSERT INTO messages (user_id, mailbox_id, uid, modseq, content_hash, internal_date, size,
                               header_text, body_text, expunged)
         VALUES (?, ?, ?, 1, ?, now(), 10, 'subject: x', 'y', ?)`,
        [id, mb, uid, Buffer.from(`${mb}/${uid}`), expunged],
      );
    for (let uid = 1; uid <= 5; uid++) await insert(boxes[0], uid, uid % 2 === 0);
    for (let uid = 1; uid <= 3; uid++) await insert(boxes[1], uid, true);
    await insert(boxes[2], 1, false);
    await k.migrate.up(name);
    const r = await k.raw(
      'SELECT name, expunged_pending FROM mailboxes WHERE user_id = ? ORDER BY name',
      [id],
    );
    expect(r.rows).toEqual([
      { name: 'Empty', expunged_pending: 0 },
      { name: 'INBOX', expunged_pending: 2 },
      { name: 'Trash', expunged_pending: 3 },
    ]);
    await k.migrate.down(name);
    const cols = await k.raw(
      "SELECT 1 FROM information_schema.columns WHERE table_name = 'mailboxes' AND column_name = 'expunged_pending'",
    );
    expect(cols.rows).toEqual([]);
    await k.migrate.latest();
  } finally {
    await db.drop();
  }
});
