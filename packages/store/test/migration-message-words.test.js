'use strict';

const { useTestDatabase } = require('@mailgate/test-support/db');
const { singlePostgresOnly } = require('@mailgate/test-support/skip');
const { userAsBefore } = require('./migration-user');

/*
 * migrations/20261125190000_message_words.js on a database that already holds mail: the
 * tsvectors the old trigger stored move to message_words unchanged, new messages get theirs
 * from the new trigger, and the way down puts the column back with the same values.
 */
// Migrates down and up again through a migration older than the Citus distribution
// (20261128340000), whose way down is none: on Citus the tables stay distributed.
const onCitus = singlePostgresOnly(
  __filename,
  'migrating down below the Citus distribution (20261128340000 has no way down)',
);
(onCitus ? describe.skip : describe)('migration 20261125190000_message_words', () => {
  const suite = useTestDatabase();

  const tsvs = async (sql, params) =>
    Object.fromEntries((await suite.db.knex.raw(sql, params)).rows.map((r) => [r.uid, r.tsv]));

  test('existing messages keep their words across the migration, both ways', async () => {
    const k = suite.db.knex;
    // By name: later migrations stay applied. Before it: a tsv column kept by a BEFORE trigger.
    const name = { name: '20261125190000_message_words.js' };
    // The text pieces' migrations, which came later, down first (newest first): their triggers
    // expect message_chunks and message_words partitions this test's hand-made user would not have.
    await k.migrate.down({ name: '20261130610200_text_in_pieces_only.js' });
    await k.migrate.down({ name: '20261130610100_compressed_pieces.js' });
    await k.migrate.down({ name: '20261125220000_message_chunks.js' });
    await k.migrate.down(name);
    const {
      id,
      boxes: [mb],
    } = await userAsBefore(k);
    const insert = (uid, subject, body) =>
      k.raw(
        `INSERT INTO messages (user_id, mailbox_id, uid, modseq, content_hash, internal_date, size,
                             subject, from_text, body_text)
       VALUES (?, ?, ?, 1, ?, now(), 10, ?, 'ann@example.org', ?)`,
        [id, mb, uid, Buffer.from(String(uid)), subject, body],
      );
    await insert(1, 'Gas prices', 'the west desk buys gas');
    await insert(2, 'Lunch', 'tacos on friday');
    const before = await tsvs(
      'SELECT uid, tsv::text AS tsv FROM messages WHERE user_id = ? ORDER BY uid',
      [id],
    );
    expect(before['1']).toMatch(/'gas':1A,8/);

    await k.migrate.up(name);
    const cols = await k.raw(
      "SELECT 1 FROM information_schema.columns WHERE table_name = 'messages' AND column_name = 'tsv'",
    );
    expect(cols.rows).toEqual([]);
    const q = 'SELECT uid, tsv::text AS tsv FROM message_words WHERE user_id = ? ORDER BY uid';
    expect(await tsvs(q, [id])).toEqual(before);
    const parts = await k.raw(
      `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'message_words'::regclass`,
    );
    expect(parts.rows.map((r) => r.relname)).toContain(`message_words_u${id}`);
    await insert(3, 'More gas', 'storage report');
    const after = await tsvs(q, [id]);
    expect(Object.keys(after)).toEqual(['1', '2', '3']);
    expect(after['3']).toMatch(/'gas':2A/);

    await k.migrate.down(name);
    expect(
      await tsvs('SELECT uid, tsv::text AS tsv FROM messages WHERE user_id = ? ORDER BY uid', [id]),
    ).toEqual(after);
    await k.migrate.latest();
    expect(await tsvs(q, [id])).toEqual(after);
  });
});
