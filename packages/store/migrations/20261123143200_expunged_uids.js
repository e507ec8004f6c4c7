'use strict';

/*
 * Expunge tombstones for changesSince() (RFC 7162 QRESYNC VANISHED (EARLIER), webmail sync):
 * an expunged message stays visible to changesSince as a hidden row until purgeExpunged()
 * deletes it; the purge then leaves (uid, modseq) here, so a client that last synced before
 * the expunge still learns about it. Keyed by user first like every table of the store, so
 * every query stays on one user; rows go with their mailbox (deleteMailbox).
 */

exports.up = async function up(knex) {
  await knex.raw(`
    CREATE TABLE expunged_uids (
      user_id int NOT NULL,
      mailbox_id int NOT NULL,
      uid bigint NOT NULL,
      modseq bigint NOT NULL,
      PRIMARY KEY (user_id, mailbox_id, uid)
    )`);
};

exports.down = async function down(knex) {
  await knex.raw('DROP TABLE expunged_uids');
};
