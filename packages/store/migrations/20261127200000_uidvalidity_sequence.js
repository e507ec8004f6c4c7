'use strict';

/*
 * UIDVALIDITY from a sequence that only grows for the life of the database (RFC 3501 2.3.1.1:
 * a mailbox name re-created, or a name reached again by RENAME, must never repeat an earlier
 * UIDVALIDITY). Until now it was the creation time in seconds, so DELETE + CREATE within one
 * second repeated it, and a cache keyed by (name, UIDVALIDITY) served the deleted mailbox's
 * messages. A sequence is part of a dump, so a restore keeps counting from where it was.
 *
 * The sequence starts above every UIDVALIDITY the store handed out so far (and above the
 * current time, the old scheme's next value), within IMAP's 32-bit nz-number. UIDVALIDITYs
 * kept from an import source (upstream IMAP, dovecot-uidlist) are not drawn from it and stay
 * as they are. Down: drops the sequence (creation falls back to nothing: code and schema go
 * together).
 */

exports.up = async function up(knex) {
  await knex.raw(
    `CREATE SEQUENCE IF NOT EXISTS mailbox_uidvalidity_seq
       AS bigint MINVALUE 1 MAXVALUE 4294967295 NO CYCLE`,
  );
  // Values far above the clock come from import sources (kept, not ours): seeding from them
  // would only burn the 32-bit range, and they never collide with ours by name and mailbox id.
  await knex.raw(
    `SELECT setval('mailbox_uidvalidity_seq', GREATEST(
        extract(epoch FROM now())::bigint,
        (SELECT COALESCE(max(uidvalidity), 1) FROM mailboxes
          WHERE uidvalidity <= extract(epoch FROM now())::bigint + 86400)))`,
  );
};

exports.down = async function down(knex) {
  await knex.raw('DROP SEQUENCE IF EXISTS mailbox_uidvalidity_seq');
};
