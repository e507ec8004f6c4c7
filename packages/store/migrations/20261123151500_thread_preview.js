'use strict';

/*
 * Webmail (issue 14): a short plain-text preview per message and its thread id, both derived
 * at import (preview by the importer's derive step, thread by the store's JWZ pass after each
 * import). Nullable: rows stored before this migration show no preview until re-imported, and
 * every message without a thread id is a thread of its own. The index serves "the messages of
 * a thread"; thread ids change only when threads merge, so flag updates stay HOT.
 */

exports.up = async (knex) => {
  await knex.raw('ALTER TABLE messages ADD COLUMN preview text, ADD COLUMN thread_id text');
  await knex.raw('CREATE INDEX messages_thread_idx ON messages (user_id, thread_id)');
};

exports.down = async (knex) => {
  await knex.raw('DROP INDEX IF EXISTS messages_thread_idx');
  await knex.raw('ALTER TABLE messages DROP COLUMN preview, DROP COLUMN thread_id');
};
