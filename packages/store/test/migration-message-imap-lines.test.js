'use strict';

const { useTestDatabase } = require('@mailgate/test-support/db');
const { singlePostgresOnly } = require('@mailgate/test-support/skip');
const { userAsBefore } = require('./migration-user');

/*
 * migrations/20261203210100_message_imap_lines.js on a database that already holds kept IMAP
 * metadata: the list-view header lines move out of message_imap into the narrow
 * message_imap_lines (with the size), unchanged and in key order, into a partition of the
 * user; message_imap keeps ENVELOPE, BODY, BODYSTRUCTURE and the size, and no `fields` column.
 * Down puts the lines back.
 */
const onCitus = singlePostgresOnly(__filename, 'per-user LIST partitions of a user made by hand');
(onCitus ? describe.skip : describe)('migration 20261203210100_message_imap_lines', () => {
  const suite = useTestDatabase();
  const NAME = { name: '20261203210100_message_imap_lines.js' };
  const columns = async (k, table) =>
    (
      await k.raw(
        `SELECT column_name FROM information_schema.columns WHERE table_name = ?
          ORDER BY ordinal_position`,
        [table],
      )
    ).rows.map((r) => r.column_name);

  test('the lines move to message_imap_lines, once, and back down', async () => {
    const k = suite.db.knex;
    await k.migrate.down(NAME);
    expect(await columns(k, 'message_imap')).toContain('fields');
    const {
      id,
      boxes: [mb],
    } = await userAsBefore(k, {
      partitions: ['messages', 'message_words', 'message_vocab', 'message_chunks', 'message_imap'],
    });
    // Lines with 8-bit characters (latin1, as kept) and folded lines; rows written out of order.
    const lines = (uid) => `Subject: s${uid} \xe9\r\n\tfolded\r\nFrom: a@b\r\n`;
    for (const uid of [3, 1, 2]) {
      await k.raw(
        `INSERT INTO message_imap (user_id, mailbox_id, uid, size, envelope, body, bodystructure, fields)
         VALUES (?, ?, ?, ?, 'e', 'b', 'bs', ?)`,
        [id, mb, uid, 100 + uid, lines(uid)],
      );
    }

    await k.migrate.up(NAME);
    expect(await columns(k, 'message_imap')).not.toContain('fields');
    expect(await columns(k, 'message_imap_lines')).toEqual([
      'user_id',
      'mailbox_id',
      'uid',
      'size',
      'fields',
    ]);
    const moved = await k.raw(
      `SELECT uid, size, fields FROM message_imap_lines WHERE user_id = ? ORDER BY ctid`,
      [id],
    );
    expect(moved.rows).toEqual(
      [1, 2, 3].map((uid) => ({ uid, size: 100 + uid, fields: lines(uid) })),
    );
    const rest = await k.raw(
      `SELECT uid, size, envelope FROM message_imap WHERE user_id = ? ORDER BY uid`,
      [id],
    );
    expect(rest.rows).toEqual([1, 2, 3].map((uid) => ({ uid, size: 100 + uid, envelope: 'e' })));
    const parts = await k.raw(
      `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'message_imap_lines'::regclass`,
    );
    expect(parts.rows.map((r) => r.relname)).toContain(`message_imap_lines_u${id}`);

    await k.migrate.down(NAME);
    const back = await k.raw(
      `SELECT uid, fields FROM message_imap WHERE user_id = ? ORDER BY uid`,
      [id],
    );
    expect(back.rows).toEqual([1, 2, 3].map((uid) => ({ uid, fields: lines(uid) })));
    await k.migrate.latest();
    expect(await columns(k, 'message_imap')).not.toContain('fields');
  });
});
