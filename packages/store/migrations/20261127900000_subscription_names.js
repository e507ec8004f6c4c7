'use strict';

/*
 * IMAP subscriptions as a list of names per user (RFC 3501 6.3.6: a server must not
 * unilaterally remove a name from the subscription list even when no mailbox of that name
 * exists any more; 6.3.9 LSUB lists such names). Until now a subscription was a column of
 * the mailbox row (20261123143100_subscriptions.js), so DELETE ended it with the row and a
 * re-created mailbox came back unsubscribed. Existing subscriptions are carried over, then
 * the column goes (one place holds a subscription). Citus: distributed by `user_id` like
 * `mailboxes` (its primary key starts with it).
 */

exports.up = async function up(knex) {
  await knex.raw(`
    CREATE TABLE subscriptions (
      user_id int NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      name text NOT NULL,
      PRIMARY KEY (user_id, name)
    )`);
  await knex.raw(
    'INSERT INTO subscriptions (user_id, name) SELECT user_id, name FROM mailboxes WHERE subscribed',
  );
  await knex.raw('ALTER TABLE mailboxes DROP COLUMN subscribed');
};

exports.down = async function down(knex) {
  // Names without a mailbox have no row to carry them: they are lost on the way down.
  await knex.raw('ALTER TABLE mailboxes ADD COLUMN subscribed boolean NOT NULL DEFAULT false');
  await knex.raw(
    `UPDATE mailboxes b SET subscribed = true
      WHERE EXISTS (SELECT 1 FROM subscriptions s WHERE s.user_id = b.user_id AND s.name = b.name)`,
  );
  await knex.raw('ALTER TABLE mailboxes ALTER COLUMN subscribed SET DEFAULT true');
  await knex.raw('DROP TABLE subscriptions');
};
