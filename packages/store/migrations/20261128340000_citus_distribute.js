'use strict';

/*
 * Citus mode (issue 34): on a Citus coordinator (the `citus` extension in this database) the
 * tables are distributed by user_id and co-located, `users` and `api_tokens` become reference
 * tables, the per-user LIST partitions give way to one DEFAULT partition per table, and the keys
 * gain user_id. What and why is in packages/store/lib/citus.js (the store's one module of
 * Citus differences) and docs/scaling-out.md. On a single PostgreSQL this migration does
 * nothing. Runs after every table exists; later migrations that create a user table distribute
 * it the same way.
 *
 * Down: Citus has no "undistribute everything" short of undistribute_table per table; a store
 * that must leave Citus is dumped and restored instead, so down is a no-op.
 */

const { distributeSchema } = require('../lib/citus');

exports.up = async function up(knex) {
  await distributeSchema(knex);
};

exports.down = async function down() {};
