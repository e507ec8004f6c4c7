'use strict';

/*
 * No index on messages.thread_id. The thread stage after every import (store assignThreads)
 * writes thread_id on every newly imported message; with the column indexed, PostgreSQL cannot
 * make those updates HOT, so each one inserted a new entry into every index of the row — the
 * six trigram GINs and the tsvector GIN included. That about doubled import time
 * (`npm run bench:import`, back to back: 173 → 93 msg/s on a loaded machine). Unindexed, the
 * update stays on the page (fillfactor 50) and touches no index. The thread routes read the
 * user's own partition (user_id is the partition key), a sequential scan of one user's rows.
 */

exports.up = async function up(knex) {
  await knex.raw('DROP INDEX IF EXISTS messages_thread_idx');
};

exports.down = async function down(knex) {
  await knex.raw('CREATE INDEX IF NOT EXISTS messages_thread_idx ON messages (user_id, thread_id)');
};
