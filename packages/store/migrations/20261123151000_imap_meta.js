'use strict';

/*
 * IMAP metadata derived from a message's raw bytes once and kept beside its row, so that a
 * mail client's first sync of a large mailbox (FETCH 1:* ENVELOPE, BODYSTRUCTURE, or the list
 * view's BODY.PEEK[HEADER.FIELDS (FROM TO SUBJECT DATE)]) is a narrow read instead of one
 * read of every message's bytes (issue 12). Written lazily by the IMAP server the first time a
 * message's metadata is needed (@mailgate/imap meta.js), never changed after: a uid's bytes
 * never change (RFC 3501 2.3.1.1). All four can be rebuilt from message_sources.raw.
 *
 *   imap_envelope, imap_body, imap_bodystructure  the ENVELOPE / BODY / BODYSTRUCTURE values
 *                                                  in wire form
 *   imap_fields                                    the raw lines (folding kept) of the common
 *                                                  header fields clients list (meta.js FIELDS)
 * Stored as text with bytes mapped one to one onto U+0000–U+00FF (latin1), so the driver
 * passes them without bytea's hex encoding. Nullable, no default: adding them rewrites nothing,
 * and none is indexed, so writing them is a HOT update.
 */

exports.up = async function up(knex) {
  await knex.raw(`ALTER TABLE messages
    ADD COLUMN IF NOT EXISTS imap_envelope text,
    ADD COLUMN IF NOT EXISTS imap_body text,
    ADD COLUMN IF NOT EXISTS imap_bodystructure text,
    ADD COLUMN IF NOT EXISTS imap_fields text`);
};

exports.down = async function down(knex) {
  await knex.raw(`ALTER TABLE messages
    DROP COLUMN IF EXISTS imap_envelope,
    DROP COLUMN IF EXISTS imap_body,
    DROP COLUMN IF EXISTS imap_bodystructure,
    DROP COLUMN IF EXISTS imap_fields`);
};
