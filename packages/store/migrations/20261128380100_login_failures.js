'use strict';

/*
 * Settled failed-login counts shared by every mailgate process on the database (issue 34.4):
 * the limiter of @mailgate/core kept them in process memory, so a guesser spreading over two
 * `mailgate serve` processes got twice the guesses. One row per limiter key (user + address,
 * address, account) and window; the window end is the row's `reset_at`. Small and shared by
 * all users (a key is not one user's): under Citus a local table of the coordinator, like
 * the other cross-user tables.
 */

exports.up = async function up(knex) {
  await knex.raw(`
    CREATE TABLE login_failures (
      key text PRIMARY KEY,
      count int NOT NULL,
      reset_at timestamptz NOT NULL
    )`);
  // Expired windows are deleted by the writes (login-ops.js); this index finds them.
  await knex.raw('CREATE INDEX login_failures_reset_at ON login_failures (reset_at)');
};

exports.down = async function down(knex) {
  await knex.raw('DROP TABLE IF EXISTS login_failures');
};
