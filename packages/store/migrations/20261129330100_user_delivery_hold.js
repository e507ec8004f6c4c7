'use strict';

/*
 * A proxied user's delivery hold (issue 33.4): while `mailgate migrate` runs an account's last
 * import pass and switches its route, mail for that user is neither relayed upstream (the
 * pass could miss it) nor stored here (the import would then find the same UIDs taken): the
 * delivery path answers it 451 and the MTA retries after the cutover. Set by the migration,
 * cleared by the route switch (route-ops.js). On Citus `users` is a reference table: the
 * column is added on every node like any column of it.
 */

exports.up = async function up(knex) {
  await knex.raw('ALTER TABLE users ADD COLUMN delivery_hold boolean NOT NULL DEFAULT false');
};

exports.down = async function down(knex) {
  await knex.raw('ALTER TABLE users DROP COLUMN delivery_hold');
};
