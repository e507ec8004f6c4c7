'use strict';

/*
 * IMAP subscriptions (RFC 3501 6.3.6 SUBSCRIBE, 6.3.9 LSUB; RFC 9051 LIST (SUBSCRIBED)): a
 * flag per mailbox. Existing mailboxes start subscribed — a migrated account shows all its
 * folders, as the legacy servers did — and so do new ones (createMailbox may say otherwise).
 */

exports.up = async function up(knex) {
  await knex.raw('ALTER TABLE mailboxes ADD COLUMN subscribed boolean NOT NULL DEFAULT true');
};

exports.down = async function down(knex) {
  await knex.raw('ALTER TABLE mailboxes DROP COLUMN subscribed');
};
