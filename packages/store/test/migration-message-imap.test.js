'use strict';

const { useTestDatabase } = require('@mailgate/test-support/db');
const { singlePostgresOnly } = require('@mailgate/test-support/skip');
const { userAsBefore } = require('./migration-user');

/*
 * migrations/20261129350100_message_imap.js on a database that already holds mail: IMAP
 * metadata the IMAP server kept in the `messages` columns imap_* moves to message_imap
 * unchanged (the user gets their partition), the wide columns are gone, and a message that
 * had none is left to the backfill (the IMAP server serves it derived meanwhile).
 */
// The user made as before this migration has per-user LIST partitions, and the test checks the
// one it gets: on Citus a user's rows live in the DEFAULT partition's shards instead.
const onCitus = singlePostgresOnly(__filename, 'per-user LIST partitions of a user made by hand');
(onCitus ? describe.skip : describe)('migration 20261129350100_message_imap', () => {
  const suite = useTestDatabase();
  const NAME = { name: '20261129350100_message_imap.js' };

  test('kept IMAP metadata moves out of the messages rows, once, into a partition of the user', async () => {
    const k = suite.db.knex;
    await k.migrate.down(NAME);
    const {
      id,
      boxes: [mb],
    } = await userAsBefore(k, {
      partitions: ['messages', 'message_words', 'message_vocab', 'message_chunks'],
    });
    const insert = (uid, meta) =>
      k.raw(
        `INSERT INTO messages (user_id, mailbox_id, uid, modseq, content_hash, internal_date, size,
                               imap_envelope, imap_body, imap_bodystructure, imap_fields, imap_size)
         VALUES (?, ?, ?, 1, ?, now(), 10, ?, ?, ?, ?, ?)`,
        [id, mb, uid, Buffer.from(String(uid)), ...meta],
      );
    const kept = [
      '("d" "s" NIL)',
      '("text" "plain")',
      '("text" "plain" NIL)',
      'Subject: s\r\n',
      12,
    ];
    await insert(1, kept);
    await insert(2, [null, null, null, null, null]);
    // Kept before imap_size existed: derived again, never moved.
    await insert(3, [...kept.slice(0, 4), null]);

    await k.migrate.up(NAME);
    const rows = (
      await k.raw(
        `SELECT uid, envelope, body, bodystructure, fields, size FROM message_imap
          WHERE user_id = ? ORDER BY uid`,
        [id],
      )
    ).rows;
    expect(rows).toEqual([
      {
        uid: 1,
        envelope: kept[0],
        body: kept[1],
        bodystructure: kept[2],
        fields: kept[3],
        size: 12,
      },
    ]);
    const cols = await k.raw(
      `SELECT column_name FROM information_schema.columns
        WHERE table_name = 'messages' AND column_name LIKE 'imap\\_%'`,
    );
    expect(cols.rows).toEqual([]);
    const parts = await k.raw(
      `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'message_imap'::regclass`,
    );
    expect(parts.rows.map((r) => r.relname)).toContain(`message_imap_u${id}`);
    await k.migrate.latest();
  });
});
