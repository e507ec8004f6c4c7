'use strict';

/*
 * \Recent (RFC 3501 2.3.2): a message is recent to the one session that is first notified of
 * it. Kept as Dovecot keeps it, one number per mailbox: `recent_uid`, the first uid no session
 * has claimed yet. Every uid at or above it is recent; a SELECT (or a selected session that
 * learns of new mail) claims them by moving it to UIDNEXT in one row update, under the
 * mailbox row's lock, so two sessions (in any process) never both claim a message, and no
 * write path (APPEND, COPY/MOVE, delivery, import) has anything to mark: a new message's uid
 * is allocated at or above it. No message row is written.
 *
 * Existing mailboxes start with nothing recent (their mail was imported or already seen); a
 * new mailbox starts at 1. Down: drops the column.
 */

exports.up = async function up(knex) {
  await knex.raw('ALTER TABLE mailboxes ADD COLUMN recent_uid bigint NOT NULL DEFAULT 1');
  await knex.raw('UPDATE mailboxes SET recent_uid = uidnext');
};

exports.down = async function down(knex) {
  await knex.raw('ALTER TABLE mailboxes DROP COLUMN recent_uid');
};
