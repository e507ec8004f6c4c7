'use strict';

/*
 * IMAP metadata in a narrow table of its own (issue 35.3, issue 31.2). Until now it was kept
 * in five `messages` columns (imap_envelope, imap_body, imap_bodystructure, imap_fields,
 * imap_size), written by the IMAP server during its first FETCH of a message (a read that
 * wrote). In the wide `messages` rows (fillfactor 50, toast_tuple_target 512: values of a long
 * row may go to TOAST) a cold list view of the large Enron mailbox (21,282 messages) read them
 * through 21,282 index probes of a 28 MB heap, 1.0-1.2 s. Now they are derived once at import or
 * delivery (@mailgate/importer deriveRow → @mailgate/mime imap-meta.js) and kept here, one
 * narrow row per message, inline (no TOAST) and in uid order, so a mailbox's metadata is one
 * short range read.
 *
 *   size           RFC822.SIZE: the length of the message as served (CRLF)
 *   envelope, body, bodystructure   ENVELOPE / BODY / BODYSTRUCTURE in wire form
 *   fields         the raw lines of the header fields mail clients list (mime FIELDS)
 * Text with bytes mapped one to one onto U+0000–U+00FF (latin1). A message whose metadata
 * holds a NUL byte has no row (text cannot keep NUL): the IMAP server derives it on the spot.
 *
 * Partitioned by user like message_sources (per-user tables; on Citus one DEFAULT partition,
 * distributed by user_id and co-located, citus.js). Existing values move over from `messages`;
 * messages that had none are derived by the resumable backfill (`mailgate db backfill-imap`,
 * service backfillImapMeta), and served, derived in memory, until then.
 */

const { isCitus, distributeTable } = require('../lib/citus');

exports.up = async function up(knex) {
  const citus = await isCitus(knex);
  // On Citus: DDL on the shards after this migration's writes, one after another (citus.js).
  if (citus) await knex.raw("SET LOCAL citus.multi_shard_modify_mode = 'sequential'");
  await knex.raw(`
    CREATE TABLE message_imap (
      user_id int NOT NULL,
      mailbox_id int NOT NULL,
      uid bigint NOT NULL,
      size int NOT NULL,
      envelope text NOT NULL,
      body text NOT NULL,
      bodystructure text NOT NULL,
      fields text NOT NULL,
      PRIMARY KEY (user_id, mailbox_id, uid)
    ) PARTITION BY LIST (user_id)`);
  // Inline (MAIN: compressed in place when a row passes ~2 KB, moved out only as a last
  // resort): the values are short (~1.3 KB a message) and read whole, a mailbox at a time; out
  // of line they would cost a TOAST probe each.
  for (const col of ['envelope', 'body', 'bodystructure', 'fields']) {
    await knex.raw(`ALTER TABLE message_imap ALTER COLUMN ${col} SET STORAGE MAIN`);
  }
  if (citus) {
    await distributeTable(knex, 'message_imap');
  } else {
    const users = await knex.raw('SELECT id FROM users ORDER BY id');
    for (const { id } of users.rows) {
      const n = Number(id);
      const exists = await knex.raw('SELECT to_regclass(?) AS t', [`messages_u${n}`]);
      if (!exists.rows[0].t) continue; // a user whose partitions were never made
      await knex.raw(
        `CREATE TABLE message_imap_u${n} PARTITION OF message_imap FOR VALUES IN (${n})`,
      );
    }
  }
  await knex.raw(`
    INSERT INTO message_imap (user_id, mailbox_id, uid, size, envelope, body, bodystructure, fields)
    SELECT user_id, mailbox_id, uid, imap_size, imap_envelope, imap_body, imap_bodystructure,
           imap_fields
      FROM messages
     WHERE imap_envelope IS NOT NULL AND imap_size IS NOT NULL AND imap_body IS NOT NULL
       AND imap_bodystructure IS NOT NULL AND imap_fields IS NOT NULL`);
  // Dropping columns rewrites nothing: the old values' space is reclaimed as rows are rewritten.
  await knex.raw(`ALTER TABLE messages
    DROP COLUMN IF EXISTS imap_envelope,
    DROP COLUMN IF EXISTS imap_body,
    DROP COLUMN IF EXISTS imap_bodystructure,
    DROP COLUMN IF EXISTS imap_fields,
    DROP COLUMN IF EXISTS imap_size`);
};

exports.down = async function down(knex) {
  await knex.raw(`ALTER TABLE messages
    ADD COLUMN IF NOT EXISTS imap_envelope text,
    ADD COLUMN IF NOT EXISTS imap_body text,
    ADD COLUMN IF NOT EXISTS imap_bodystructure text,
    ADD COLUMN IF NOT EXISTS imap_fields text,
    ADD COLUMN IF NOT EXISTS imap_size integer`);
  await knex.raw('DROP TABLE IF EXISTS message_imap');
};
