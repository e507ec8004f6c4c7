'use strict';

/*
 * A persisted snapshot of a mailbox's list view (packages/store/lib/list-cache.js, option
 * `persist`), as Dovecot keeps dovecot.index.cache beside its mail files: a service that starts
 * with empty memory reads one row of JSON instead of building every list row through the
 * driver (Enron large: 21,282 rows). Exact by modseq like the in-memory cache: a snapshot is
 * used only at its mailbox's UIDVALIDITY, and caught up by the rows with a higher modseq.
 * Keyed by user first like every table of the store. Rows go with their mailbox: deleteMailbox
 * deletes them, and the foreign keys delete them with a mailbox or user deleted by other means
 * (and refuse a background write that lands after its mailbox's delete).
 */

exports.up = async function up(knex) {
  await knex.raw(`
    CREATE TABLE list_snapshots (
      user_id int NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      mailbox_id int NOT NULL REFERENCES mailboxes(id) ON DELETE CASCADE,
      uidvalidity bigint NOT NULL,
      modseq bigint NOT NULL,
      format int NOT NULL,
      rows int NOT NULL,
      body text NOT NULL,
      written_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (user_id, mailbox_id)
    )`);
};

exports.down = async function down(knex) {
  await knex.raw('DROP TABLE list_snapshots');
};
