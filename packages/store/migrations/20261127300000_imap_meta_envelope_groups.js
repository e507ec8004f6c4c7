'use strict';

/*
 * Forget the kept IMAP metadata (migrations/20261123151000_imap_meta.js) derived before the
 * ENVELOPE fixes of issue 28 item 5: groups (`Cc: g2: (foo) ;` gave a ("foo" NIL NIL NIL)
 * address), comments inside addr-specs, and a second `Cc:` line that was dropped. Kept values
 * are never re-derived on their own (a uid's bytes never change), so without this a migrated
 * database would go on serving the old ENVELOPE. The IMAP server derives them again, lazily,
 * the first time a FETCH needs them; nothing else reads these columns.
 */

exports.up = async function up(knex) {
  await knex.raw(`UPDATE messages
    SET imap_envelope = NULL, imap_body = NULL, imap_bodystructure = NULL, imap_fields = NULL
    WHERE imap_envelope IS NOT NULL`);
};

// Nothing to restore: the columns are a cache of what the raw bytes give.
exports.down = async function down() {};
