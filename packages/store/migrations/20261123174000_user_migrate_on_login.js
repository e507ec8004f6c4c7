'use strict';

/*
 * `mailgate migrate U --on-login` (issue 12 item 4, optional part): the user's account is moved
 * in the background when they first log in through the migration proxy. The flag is taken
 * (cleared) by the one IMAP server process that starts the migration, and set again if it fails.
 */

exports.up = async function up(knex) {
  await knex.raw('ALTER TABLE users ADD COLUMN migrate_on_login boolean NOT NULL DEFAULT false');
};

exports.down = async function down(knex) {
  await knex.raw('ALTER TABLE users DROP COLUMN migrate_on_login');
};
