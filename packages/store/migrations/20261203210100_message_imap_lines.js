'use strict';

/*
 * The list-view header lines in a narrow table of their own (issue 35.3): moved out of
 * `message_imap`, not copied. A client's list view (`FETCH 1:* (FLAGS RFC822.SIZE
 * BODY.PEEK[HEADER.FIELDS (FROM TO SUBJECT DATE …)])`) reads the lines and the size only, but
 * they shared their rows with ENVELOPE, BODY and BODYSTRUCTURE: a cold list view of the large
 * Enron mailbox (21,282 messages) scanned the whole 23 MB partition from disk, where the lines
 * are 10 MB (cold sequential scan 33-97 ms against 10-12, EXPLAIN (ANALYZE) after a restart and
 * a dropped page cache, bench/results/imap-cold-listview-2026-11-28b/README.md). An ENVELOPE
 * fetch, a client's first sync, now scans the rest (13 MB) without the lines.
 *
 *   message_imap_lines (user_id, mailbox_id, uid, size, fields)
 *     size    RFC822.SIZE (also kept in message_imap: each read is one table)
 *     fields  the raw lines of the header fields mail clients list (mime FIELDS), latin1 text
 *
 * A message has a row in both tables or in neither (written in the same statement or
 * transaction everywhere: import, append, COPY/MOVE, backfill; deleted together by the purge
 * and mailbox deletion). Partitioned by user like message_imap (on Citus one DEFAULT
 * partition, distributed by user_id and co-located, citus.js). Existing lines move over here;
 * the dropped column's space in old rows is reclaimed as rows are rewritten (or at once by
 * `VACUUM FULL message_imap`).
 */

const { isCitus, distributeTable } = require('../lib/citus');

exports.up = async function up(knex) {
  const citus = await isCitus(knex);
  if (citus) await knex.raw("SET LOCAL citus.multi_shard_modify_mode = 'sequential'");
  await knex.raw(`
    CREATE TABLE message_imap_lines (
      user_id int NOT NULL,
      mailbox_id int NOT NULL,
      uid bigint NOT NULL,
      size int NOT NULL,
      fields text NOT NULL,
      PRIMARY KEY (user_id, mailbox_id, uid)
    ) PARTITION BY LIST (user_id)`);
  // Inline, as in message_imap: short values read whole, a mailbox at a time.
  await knex.raw('ALTER TABLE message_imap_lines ALTER COLUMN fields SET STORAGE MAIN');
  if (citus) {
    await distributeTable(knex, 'message_imap_lines');
  } else {
    const users = await knex.raw('SELECT id FROM users ORDER BY id');
    for (const { id } of users.rows) {
      const n = Number(id);
      const exists = await knex.raw('SELECT to_regclass(?) AS t', [`message_imap_u${n}`]);
      if (!exists.rows[0].t) continue; // a user whose partitions were never made
      await knex.raw(
        `CREATE TABLE message_imap_lines_u${n} PARTITION OF message_imap_lines FOR VALUES IN (${n})`,
      );
    }
  }
  // In key order: a mailbox's lines are one short sequential read.
  await knex.raw(`
    INSERT INTO message_imap_lines (user_id, mailbox_id, uid, size, fields)
    SELECT user_id, mailbox_id, uid, size, fields FROM message_imap
     ORDER BY user_id, mailbox_id, uid`);
  await knex.raw('ALTER TABLE message_imap DROP COLUMN fields');
};

exports.down = async function down(knex) {
  await knex.raw('ALTER TABLE message_imap ADD COLUMN fields text');
  await knex.raw(`UPDATE message_imap i SET fields = l.fields FROM message_imap_lines l
    WHERE l.user_id = i.user_id AND l.mailbox_id = i.mailbox_id AND l.uid = i.uid`);
  // Rows without lines (none, if both were written together) cannot keep a NULL.
  await knex.raw('DELETE FROM message_imap WHERE fields IS NULL');
  await knex.raw('ALTER TABLE message_imap ALTER COLUMN fields SET NOT NULL');
  // Citus refuses SET STORAGE on a distributed table (the up sets it on the new table before
  // distributing it): the column keeps the default storage there, which only changes where
  // PostgreSQL may put long values, never what they hold.
  if (!(await isCitus(knex))) {
    await knex.raw('ALTER TABLE message_imap ALTER COLUMN fields SET STORAGE MAIN');
  }
  await knex.raw('DROP TABLE IF EXISTS message_imap_lines');
};
