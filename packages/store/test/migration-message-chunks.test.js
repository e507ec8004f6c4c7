'use strict';

const { useTestDatabase } = require('@mailgate/test-support/db');
const { singlePostgresOnly } = require('@mailgate/test-support/skip');
const { userAsBefore } = require('./migration-user');

/*
 * migrations/20261125220000_message_chunks.js on a database that already holds mail: its
 * header and body texts are cut into pieces that reassemble into them, new messages get theirs
 * from the trigger, and the way down restores the trigram indexes on the columns.
 */
// Migrates down and up again through a migration older than the Citus distribution
// (20261128340000), whose way down is none: on Citus the tables stay distributed.
const onCitus = singlePostgresOnly(
  __filename,
  'migrating down below the Citus distribution (20261128340000 has no way down)',
);
(onCitus ? describe.skip : describe)('migration 20261125220000_message_chunks', () => {
  const suite = useTestDatabase();

  test('existing texts are cut into pieces on the way up; the column indexes return on the way down', async () => {
    const k = suite.db.knex;
    const name = { name: '20261125220000_message_chunks.js' };
    // The later migrations of the pieces down first, newest first (they use its table).
    await k.migrate.down({ name: '20261130610200_text_in_pieces_only.js' });
    await k.migrate.down({ name: '20261130610100_compressed_pieces.js' });
    await k.migrate.down(name);
    const {
      id,
      boxes: [mb],
    } = await userAsBefore(k, { partitions: ['messages', 'message_words', 'message_vocab'] });
    const long = Array.from({ length: 500 }, (_, i) => `w${i}`).join(' '); // 2,389 characters
    const insert = (uid, header, body) =>
      k.raw(
        `INSERT INTO messages (user_id, mailbox_id, uid, modseq, content_hash, internal_date, size,
                             header_text, body_text)
       VALUES (?, ?, ?, 1, ?, now(), 10, ?, ?)`,
        [id, mb, uid, Buffer.from(String(uid)), header, body],
      );
    await insert(1, 'subject: gas', long);
    await insert(2, 'subject: lunch', 'tacos on friday');
    await insert(3, '', '');

    await k.migrate.up(name);
    const pieces = async () =>
      (
        await k.raw(
          `SELECT uid::int, kind, string_agg(CASE WHEN seq = 0 THEN t ELSE substr(t, 251) END, ''
                ORDER BY seq) AS t, count(*)::int AS n
           FROM message_chunks WHERE user_id = ? GROUP BY 1, 2 ORDER BY 1, 2`,
          [id],
        )
      ).rows;
    expect(await pieces()).toEqual([
      { uid: 1, kind: 0, t: 'subject: gas', n: 1 },
      { uid: 1, kind: 1, t: long, n: 2 },
      { uid: 2, kind: 0, t: 'subject: lunch', n: 1 },
      { uid: 2, kind: 1, t: 'tacos on friday', n: 1 },
    ]);
    const parts = await k.raw(
      `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'message_chunks'::regclass`,
    );
    expect(parts.rows.map((r) => r.relname)).toContain(`message_chunks_u${id}`);
    // A piece straddling the cut (w339 ends at 1,700) is found in one piece.
    const hits = await k.raw(
      "SELECT DISTINCT uid::int FROM message_chunks WHERE user_id = ? AND t LIKE '%w338 w339 w340%'",
      [id],
    );
    expect(hits.rows).toEqual([{ uid: 1 }]);
    await insert(4, 'subject: more gas', 'storage report');
    expect((await pieces()).filter((r) => r.uid === 4)).toHaveLength(2);
    const trgm = async () =>
      (
        await k.raw(
          `SELECT indexname FROM pg_indexes WHERE tablename = 'messages'
            AND indexname IN ('messages_header_text_trgm', 'messages_body_text_trgm') ORDER BY 1`,
        )
      ).rows.map((r) => r.indexname);
    expect(await trgm()).toEqual([]);

    await k.migrate.down(name);
    expect(await trgm()).toEqual(['messages_body_text_trgm', 'messages_header_text_trgm']);
    const gone = await k.raw("SELECT to_regclass('message_chunks') AS t");
    expect(gone.rows[0].t).toBeNull();
    await k.raw(`DELETE FROM messages WHERE user_id = ?`, [id]);
    await k.migrate.latest();
  });
});
