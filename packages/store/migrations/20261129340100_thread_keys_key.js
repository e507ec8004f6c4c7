'use strict';

/*
 * thread_keys gets a primary key (user_id, key, mailbox_id, uid) and an index on its mailbox
 * (issue 34). Why:
 *
 *   - Citus moves a shard online by logical replication, which needs a replica identity on
 *     every table of the shard group; thread_keys was the one table without a key, so a
 *     rebalance had to use `block_writes` (writes to a moving shard waited for the move). With
 *     the key, `citus_rebalance_start()` runs in its default mode and writes go on.
 *   - The key is what the writers already mean: one row per message and key (the append and
 *     the thread stage insert a key only WHERE NOT EXISTS that row; thread-ops.js). Its index,
 *     led by (user_id, key), serves the thread stage's key lookups as thread_keys_key_idx did,
 *     which is dropped (the same columns first: a second copy of them only costs writes).
 *   - (user_id, mailbox_id, uid): deleting a mailbox deletes its keys, and a copy reads the
 *     source mailbox's keys; both scanned every key of the user before.
 *
 * Duplicate rows (none should exist; a key must not fail on old data) are removed first, one
 * kept. On Citus the statements run on every shard, one shard after another: the migration's
 * transaction writes before its DDL, and Citus refuses parallel DDL after a write in the same
 * transaction (as packages/store/lib/citus.js distributeSchema does).
 */

const { isCitus } = require('../lib/citus');

/** On Citus: shard by shard, and allowed to visit every shard (a session may forbid that). */
async function everyShard(knex) {
  if (!(await isCitus(knex))) return;
  await knex.raw("SET LOCAL citus.multi_shard_modify_mode = 'sequential'");
  await knex.raw('SET LOCAL citus.multi_task_query_log_level = off');
}

exports.up = async function up(knex) {
  await everyShard(knex);
  await knex.raw(`
    DELETE FROM thread_keys a USING thread_keys b
     WHERE a.user_id = b.user_id AND a.key = b.key AND a.mailbox_id = b.mailbox_id
       AND a.uid = b.uid AND a.ctid > b.ctid`);
  await knex.raw(
    'ALTER TABLE thread_keys ADD CONSTRAINT thread_keys_pkey PRIMARY KEY (user_id, key, mailbox_id, uid)',
  );
  await knex.raw('DROP INDEX IF EXISTS thread_keys_key_idx');
  await knex.raw('CREATE INDEX thread_keys_mailbox_idx ON thread_keys (user_id, mailbox_id, uid)');
};

exports.down = async function down(knex) {
  await everyShard(knex);
  await knex.raw('DROP INDEX IF EXISTS thread_keys_mailbox_idx');
  await knex.raw('CREATE INDEX thread_keys_key_idx ON thread_keys (user_id, key)');
  await knex.raw('ALTER TABLE thread_keys DROP CONSTRAINT thread_keys_pkey');
};
