'use strict';

/*
 * RFC822.SIZE kept beside the other IMAP metadata (migrations/20261123151000_imap_meta.js):
 * the size of the message as IMAP serves it, with CRLF line ends (RFC 3501 2.2, 2.3.4), which
 * differs from messages.size (the stored bytes, kept exact for export) for mail stored with
 * bare LF, as most mbox and Maildir mail is (issue 28 item 11). Kept so that a FETCH of FLAGS
 * and RFC822.SIZE for a whole mailbox reads no message bytes. Metadata kept before this
 * column existed (imap_size NULL) is not used: its BODYSTRUCTURE sizes counted bare LF; the
 * IMAP server derives it again the first time it is needed and overwrites it.
 */

exports.up = async function up(knex) {
  await knex.raw('ALTER TABLE messages ADD COLUMN IF NOT EXISTS imap_size integer');
};

exports.down = async function down(knex) {
  await knex.raw('ALTER TABLE messages DROP COLUMN IF EXISTS imap_size');
};
