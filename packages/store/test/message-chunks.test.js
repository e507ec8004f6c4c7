'use strict';

const path = require('node:path');
const { PgStore } = require('@mailgate/store');
const { likeEscape } = require('@mailgate/query');
const { useCliSuite } = require('@mailgate/test-support/db');
const { msg, importInbox } = require('@mailgate/test-support/mail');
const { onCitus } = require('@mailgate/test-support/skip');
const { textOf } = require('../lib/chunks-sql');

/*
 * Substring search over the header and body text reads message_chunks: the text in
 * overlapping pieces (migrations/20261125220000_message_chunks.js). The answers must be the
 * ones `column LIKE '%…%'` gives over the whole text, also for patterns that cross a piece
 * boundary, patterns longer than the overlap, LIKE metacharacters and characters outside
 * ASCII; and the pieces must follow every write path.
 */

// The cut of new pieces (migrations/20261130610100_compressed_pieces.js; 1,700 before it).
const { PIECE_STEP: STEP, PIECE_OVERLAP: OVERLAP } = require('../lib/chunks-sql');

// A deterministic generator: the same texts on every run.
function prng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const ALPHABET = [...'abcdefghij klmno pqrst 0123 %_\\ éüß 😀 ']; // spaces weigh more
function text(rand, n) {
  let out = '';
  for (let i = 0; i < n; i++) out += ALPHABET[Math.floor(rand() * ALPHABET.length)];
  return out;
}

// A message's texts: the row's own where an UPDATE wrote one, else the text it was given.
const TEXTS = ['header_text', 'body_text']
  .map(
    (c) =>
      `CASE WHEN m.${c} <> '' THEN m.${c} ELSE (SELECT g.${c} FROM given_text g WHERE g.user_id = m.user_id
         AND g.mailbox_id = m.mailbox_id AND g.uid = m.uid) END AS ${c}`,
  )
  .join(', ');

describe('message_chunks: substring answers equal LIKE over the whole text', () => {
  const ctx = useCliSuite('mc');
  let store;
  let user;
  let inbox;
  const rand = prng(20261125);

  // The pieces the migration's cut gives (a second implementation, in bytes as it cuts).
  const piecesOf = (text) => {
    const b = Buffer.from(text, 'utf8');
    if (b.length <= STEP + OVERLAP) return [text];
    const inside = (x) => x < b.length && (b[x] & 0xc0) === 0x80;
    const out = [];
    for (let i = 0; ; i++) {
      let a = i * STEP;
      while (inside(a)) a++;
      let e = Math.min(i * STEP + STEP + OVERLAP, b.length);
      while (inside(e)) e++;
      out.push(b.subarray(a, e).toString('utf8'));
      if (e >= b.length) return out;
    }
  };
  // Every message's pieces as cut from its texts, and no piece of a message that is gone.
  const check = async () => {
    const k = ctx.db.knex;
    const stored = {};
    const rows = await k.raw(
      'SELECT mailbox_id, uid, kind, seq, t FROM message_chunks WHERE user_id = ? ORDER BY 1, 2, 3, 4',
      [user.id],
    );
    for (const r of rows.rows) {
      const key = `${r.mailbox_id}/${r.uid}/${r.kind}`;
      (stored[key] ||= []).push([r.seq, r.t]);
    }
    const want = {};
    const messages = await k.raw(
      `SELECT mailbox_id, uid, ${TEXTS} FROM messages m WHERE user_id = ?`,
      [user.id],
    );
    for (const m of messages.rows) {
      for (const [kind, t] of [
        [0, m.header_text],
        [1, m.body_text],
      ]) {
        if (t !== '') want[`${m.mailbox_id}/${m.uid}/${kind}`] = piecesOf(t).map((x, i) => [i, x]);
      }
    }
    expect(stored).toEqual(want);
    return new Set(messages.rows.map((m) => `${m.mailbox_id}/${m.uid}`)).size;
  };

  // The reference: LIKE over the whole texts, as before the pieces: the texts the writers gave
  // (captured below; a row keeps a text only when an UPDATE wrote it).
  const reference = async (mailboxId, field, value) => {
    const p = `%${likeEscape(value.toLowerCase())}%`;
    const r = await ctx.db.knex.raw(
      `SELECT uid FROM (SELECT uid, expunged, ${TEXTS} FROM messages m
                         WHERE user_id = ? AND mailbox_id = ?) x
        WHERE NOT expunged AND (body_text LIKE ? ${field === 'body' ? '' : 'OR header_text LIKE ?'})
        ORDER BY uid`,
      [user.id, mailboxId, p, ...(field === 'body' ? [] : [p])],
    );
    return r.rows.map((x) => Number(x.uid));
  };
  const search = async (mailbox, ast) =>
    (await store.search(user.id, ast, { mailbox: { name: mailbox } })).hits.map((h) => h.uid);
  const sub = (field, value) => ({ type: 'substring', field, value });

  beforeAll(async () => {
    // The texts every insert into messages is given, captured by a trigger that fires before
    // the store's own (triggers fire in name order), which stores the row without them.
    // On Citus the table is distributed with the user's other rows (the trigger runs on the
    // user's shard and writes the co-located one), as the store's own side tables are.
    await ctx.db.knex.transaction(async (trx) => {
      if (onCitus()) {
        await trx.raw('SET LOCAL citus.enable_unsafe_triggers = on');
        await trx.raw("SET LOCAL citus.multi_shard_modify_mode = 'sequential'");
      }
      await trx.raw(`CREATE TABLE given_text (user_id int, mailbox_id int, uid bigint,
        header_text text, body_text text, PRIMARY KEY (user_id, mailbox_id, uid))`);
      if (onCitus()) {
        await trx.raw(
          "SELECT create_distributed_table('given_text', 'user_id', colocate_with => 'mailboxes')",
        );
      }
      await trx.raw(`CREATE FUNCTION capture_given_text() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          INSERT INTO given_text VALUES (NEW.user_id, NEW.mailbox_id, NEW.uid, NEW.header_text, NEW.body_text);
          RETURN NEW;
        END $$`);
      await trx.raw(`CREATE TRIGGER a_capture_given_text BEFORE INSERT ON messages
        FOR EACH ROW EXECUTE FUNCTION capture_given_text()`);
    });
    store = new PgStore(ctx.db.knex, { listCacheRows: 0 });
    const messages = [];
    for (let i = 0; i < 24; i++) {
      // Lengths around the piece edges: one piece, exactly one piece, two, several.
      const n = [0, 10, 600, STEP + OVERLAP, STEP + OVERLAP + 1, 4000, 9000][i % 7];
      messages.push(
        msg({
          subject: `Piece ${i}`,
          headers: ['Content-Type: text/plain; charset=utf-8', `X-Filler: ${text(rand, i * 40)}`],
          body: `${text(rand, n)}\n`,
        }),
      );
    }
    ({ user, inbox } = await importInbox(store, path.join(ctx.tmp, 'a.mbox'), messages, 'mc'));
  });

  test('import: every text is in pieces that reassemble into it, and kept nowhere else', async () => {
    expect(await check()).toBe(24);
    const k = ctx.db.knex;
    // Issue 30.6: the row keeps neither text; the pieces give both back exactly.
    const kept = await k.raw(
      `SELECT count(*)::int AS n FROM messages WHERE user_id = ? AND (header_text <> '' OR body_text <> '')`,
      [user.id],
    );
    expect(kept.rows[0].n).toBe(0);
    const back = await k.raw(
      `SELECT count(*)::int AS n,
              count(*) FILTER (WHERE ${textOf('m', 0, user.id)} = g.header_text
                                 AND ${textOf('m', 1, user.id)} = g.body_text)::int AS same
         FROM given_text g JOIN messages m USING (user_id, mailbox_id, uid)
        WHERE g.user_id = ? AND m.user_id = ?`,
      [user.id, user.id],
    );
    expect(back.rows[0]).toEqual({ n: 24, same: 24 });
    const multi = await ctx.db.knex.raw(
      'SELECT count(*)::int AS n FROM message_chunks WHERE user_id = ? AND seq >= 2',
      [user.id],
    );
    expect(multi.rows[0].n).toBeGreaterThan(0);
  });

  test('patterns across piece edges, longer than the overlap, with metacharacters: same answers', async () => {
    const bodies = (
      await ctx.db.knex.raw(
        'SELECT uid, body_text FROM given_text WHERE user_id = ? AND mailbox_id = ? ORDER BY uid',
        [user.id, inbox.id],
      )
    ).rows.filter((r) => Buffer.byteLength(r.body_text) > 4000);
    expect(bodies.length).toBeGreaterThan(3);
    // len bytes from byte offset at, both ends moved back to a character boundary
    const slice = (b, at, len) => {
      const back = (x) => {
        while (x > 0 && x < b.length && (b[x] & 0xc0) === 0x80) x--;
        return x;
      };
      return b.subarray(back(at), back(at + len)).toString('utf8');
    };
    const patterns = [];
    for (const r of bodies) {
      const b = Buffer.from(r.body_text, 'utf8');
      // starts just before, at and after the first and second piece edges and the overlap's end
      for (const at of [STEP - 3, STEP, STEP + OVERLAP - 2, 2 * STEP - 1, 2 * STEP + OVERLAP - 5]) {
        for (const len of [3, 7, OVERLAP, OVERLAP + 1, OVERLAP + 2, OVERLAP + 4, 600]) {
          if (at + len <= b.length) patterns.push(slice(b, at, len));
        }
      }
    }
    // from the headers too, in capitals (search is case-insensitive), and a pattern absent
    patterns.push('X-FILLER', 'piece 1', '%_\\', 'é😀', 'zzzz-not-there');
    let found = 0;
    for (const p of patterns) {
      for (const field of ['text', 'body']) {
        const want = await reference(inbox.id, field, p);
        expect({ p, field, got: await search('INBOX', sub(field, p)) }).toEqual({
          p,
          field,
          got: want,
        });
        if (want.length) found++;
      }
    }
    expect(found).toBeGreaterThan(patterns.length);
    // under OR and NOT (the set form of the subquery)
    const [a, b] = [patterns[0], patterns[9]];
    const either = [
      ...new Set([
        ...(await search('INBOX', sub('text', a))),
        ...(await search('INBOX', sub('text', b))),
      ]),
    ].sort((x, y) => x - y);
    expect(
      await search('INBOX', { type: 'or', children: [sub('text', a), sub('text', b)] }),
    ).toEqual(either);
    const all = await search('INBOX', { type: 'all' });
    const inA = await reference(inbox.id, 'body', a);
    expect(inA.length).toBeGreaterThan(0);
    expect(await search('INBOX', { type: 'not', child: sub('body', a) })).toEqual(
      all.filter((u) => !inA.includes(u)),
    );
    // across mailboxes (no mailbox scope: the set form), through the flag-change path
    await store.setFlags(user.id, inbox.id, { query: sub('text', a), add: ['\\Flagged'] });
    expect(await search('INBOX', { type: 'flag', flag: '\\Flagged' })).toEqual(
      await reference(inbox.id, 'text', a),
    );
  });

  test('copy, move, expunge, purge and mailbox delete keep the pieces exact', async () => {
    const some = (await search('INBOX', { type: 'all' })).slice(3, 9);
    const archive = await store.createMailbox(user.id, 'Archive');
    await store.copyMessages(user.id, inbox.id, some.slice(0, 3), archive.id);
    await store.copyMessages(user.id, inbox.id, some.slice(3), archive.id, { move: true });
    await store.purgeExpunged(user.id, inbox.id);
    expect(await check()).toBe(27);
    // A copy is given its source's text, read back from the source's pieces.
    const copied = await ctx.db.knex.raw(
      `SELECT count(*)::int AS n FROM given_text c JOIN given_text s
          ON s.user_id = c.user_id AND s.mailbox_id = ? AND s.header_text = c.header_text
         AND s.body_text = c.body_text
       WHERE c.user_id = ? AND c.mailbox_id = ?`,
      [inbox.id, user.id, archive.id],
    );
    expect(copied.rows[0].n).toBe(6);
    const p = 'piece';
    expect(await search('Archive', sub('text', p))).toEqual(await reference(archive.id, 'text', p));
    expect(await search('Archive', sub('text', p))).toHaveLength(6);
    await store.deleteMailbox(user.id, 'Archive');
    expect(await check()).toBe(21);
  });

  test('a flag change leaves the pieces alone; a text change rewrites them', async () => {
    const [uid] = await search('INBOX', { type: 'all' });
    const xmins = async () =>
      (
        await ctx.db.knex.raw(
          `SELECT string_agg(xmin::text, ',' ORDER BY kind, seq) AS x FROM message_chunks
            WHERE user_id = ? AND mailbox_id = ? AND uid = ?`,
          [user.id, inbox.id, uid],
        )
      ).rows[0].x;
    const before = await xmins();
    await store.setFlags(user.id, inbox.id, { uids: [uid], add: ['\\Seen'] });
    expect(await xmins()).toBe(before);
    // What no code path does today, but the trigger covers (UPDATE OF body_text …).
    await ctx.db.knex.raw(
      `UPDATE messages SET body_text = 'kerosene tender' WHERE user_id = ? AND mailbox_id = ? AND uid = ?`,
      [user.id, inbox.id, uid],
    );
    expect(await search('INBOX', sub('body', 'KEROSENE'))).toEqual([uid]);
    expect(await check()).toBe(21);
    // The importer's cap is 2,000,000 characters: cut in one pass, not once per piece from
    // the start (8.5 s for such a body with substr()).
    await ctx.db.knex.raw(
      `UPDATE messages SET body_text = repeat('wärme öl ', 220000) || 'ende der liste'
        WHERE user_id = ? AND mailbox_id = ? AND uid = ?`,
      [user.id, inbox.id, uid],
    );
    expect(await search('INBOX', sub('body', 'öl ende der'))).toEqual([uid]);
    expect(await check()).toBe(21);
  });
});
