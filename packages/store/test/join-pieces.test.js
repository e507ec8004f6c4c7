'use strict';

const path = require('node:path');
const { PgStore } = require('@mailgate/store');
const { useCliSuite } = require('@mailgate/test-support/db');
const { msg, importInbox } = require('@mailgate/test-support/mail');
const { textOf, PIECE_STEP, PIECE_OVERLAP } = require('../lib/chunks-sql');

/*
 * mailgate_join_pieces gives a text back from its pieces (migrations/20261130610300 and
 * 20261201150100_join_pieces_linear.js): exactly, whatever character straddles a piece edge,
 * for pieces of either cut (3,800-byte step now, 1,700 before), and for a message of many
 * pieces copied and moved by IMAP COPY/MOVE (the copy's text is read back from the source's
 * pieces). The join used to be quadratic in the number of pieces; the importer's cap of
 * 2,000,000 characters is the case that matters, so a message near it is copied here.
 */

// The pieces of a text as a cut of `step` and `step + overlap` bytes makes them (both ends
// moved forward to a character boundary), written apart from the SQL cut.
function cut(text, step, overlap) {
  const b = Buffer.from(text, 'utf8');
  if (b.length <= step + overlap) return [text];
  const inside = (x) => x < b.length && (b[x] & 0xc0) === 0x80;
  const out = [];
  for (let i = 0; ; i++) {
    let a = i * step;
    while (inside(a)) a++;
    let e = Math.min(i * step + step + overlap, b.length);
    while (inside(e)) e++;
    out.push(b.subarray(a, e).toString('utf8'));
    if (e >= b.length) return out;
  }
}

describe('mailgate_join_pieces', () => {
  const ctx = useCliSuite('jp');
  let store;

  beforeAll(() => {
    store = new PgStore(ctx.db.knex, { listCacheRows: 0 });
  });

  const join = async (pieces) =>
    (await ctx.db.knex.raw('SELECT mailgate_join_pieces(?::text[]) AS t', [pieces])).rows[0].t;

  test('gives back every text from its pieces, whatever character lies on an edge', async () => {
    // A character of 1 to 4 bytes starting just before each step edge, so the next piece's
    // start is moved forward by 0 to 3 bytes, on every edge of a text of many pieces.
    const wide = ['a', 'é', '€', '😀'];
    const texts = [''];
    for (const w of wide) {
      for (let shift = 0; shift < 4; shift++) {
        const unit = 'x'.repeat(PIECE_STEP - Buffer.byteLength(w) - shift) + w + 'y'.repeat(shift);
        texts.push(unit.repeat(7) + 'end');
      }
    }
    texts.push('short text', 'ü'.repeat(PIECE_STEP), '😀'.repeat(5 * PIECE_STEP));
    for (const t of texts) {
      // The server's own cut (the one every write uses) and a cut of each step, as stored
      // before and after 20261130610100_compressed_pieces.js.
      const own = (
        await ctx.db.knex.raw(
          'SELECT array_agg(piece ORDER BY seq) AS ps FROM mailgate_text_pieces(?)',
          [t],
        )
      ).rows[0].ps;
      expect(own).toEqual(cut(t, PIECE_STEP, PIECE_OVERLAP));
      expect(await join(own)).toBe(t);
      expect(await join(cut(t, 1700, PIECE_OVERLAP))).toBe(t);
    }
    // Many pieces of the old cut too.
    expect(texts.some((t) => cut(t, 1700, PIECE_OVERLAP).length > 40)).toBe(true);
  });

  test('a message of ~2,000,000 characters is copied and moved with its whole text', async () => {
    // The importer keeps at most 2,000,000 characters of a body; this one is just under it,
    // with characters of 2 and 4 bytes (2.4 MB), so its ~650 pieces start inside characters too.
    const words = 'wärme öl 😀 ';
    const body = words.repeat(Math.floor(1990000 / words.length)) + 'ende der liste';
    const { user, inbox } = await importInbox(
      store,
      path.join(ctx.tmp, 'big.mbox'),
      [
        msg({ subject: 'small one', body: 'nothing much\n' }),
        msg({
          subject: 'Big one',
          headers: ['Content-Type: text/plain; charset=utf-8'],
          body: `${body}\n`,
        }),
      ],
      'jp',
    );
    const k = ctx.db.knex;
    const pieces = async (mailboxId, uid) =>
      (
        await k.raw(
          `SELECT count(*)::int AS n, string_agg(md5(t), ',' ORDER BY kind, seq) AS h
             FROM message_chunks WHERE user_id = ? AND mailbox_id = ? AND uid = ?`,
          [user.id, mailboxId, uid],
        )
      ).rows[0];
    const bodyOf = async (mailboxId, uid) =>
      (
        await k.raw(
          `SELECT ${textOf('m', 1, '?')} AS t FROM messages m
            WHERE m.user_id = ? AND m.mailbox_id = ? AND m.uid = ?`,
          [user.id, user.id, mailboxId, uid],
        )
      ).rows[0].t;
    const uid = 2;
    const src = await pieces(inbox.id, uid);
    expect(src.n).toBeGreaterThan(600);
    const text = await bodyOf(inbox.id, uid);
    expect(text).toBe(`${body}\n`);
    expect(text.endsWith('ende der liste\n')).toBe(true);

    const copies = await store.createMailbox(user.id, 'Copies');
    const moved = await store.createMailbox(user.id, 'Moved');
    const c = await store.copyMessages(user.id, inbox.id, [1, uid], copies.id);
    expect(c.map).toHaveLength(2);
    const cu = c.map.find((p) => p[0] === uid)[1];
    // The copy's pieces are cut from the joined text: the same pieces only if it was exact.
    expect(await pieces(copies.id, cu)).toEqual(src);
    expect(await bodyOf(copies.id, cu)).toBe(text);
    const m = await store.copyMessages(user.id, copies.id, [cu], moved.id, { move: true });
    const mu = m.map[0][1];
    expect(await pieces(moved.id, mu)).toEqual(src);
    // A pattern longer than the pieces' overlap is tested against the joined text.
    const tail = `${words.repeat(30)}ende der liste`;
    expect(Buffer.byteLength(tail)).toBeGreaterThan(PIECE_OVERLAP + 1);
    const hits = await store.search(user.id, { type: 'substring', field: 'body', value: tail });
    expect(hits.hits.map((h) => [h.mailboxId, h.uid]).sort()).toEqual(
      [
        [inbox.id, uid],
        [moved.id, mu],
      ].sort(),
    );
  });
});
