'use strict';

/*
 * message_vocab gets a replica identity on Citus. Citus moves a shard online by logical
 * replication (citus_rebalance_start() in its default mode, a worker added while mail is read
 * and written: issue 34.3), which needs a replica identity on every table of the shard group.
 * message_vocab (20261203310100_word_vocabulary.js) has no key on purpose: concurrent writers
 * add a user's new words without waiting on each other (a unique key with ON CONFLICT
 * deadlocked between import batches), so a word may stand twice and no column set identifies a
 * row. REPLICA IDENTITY FULL identifies a row by all its columns, which is what a row of
 * (user_id, word) is; updates and deletes of it are rare (a user's deletion). Without it the
 * rebalance was refused ("cannot use logical replication to transfer shards of the relation
 * message_vocab_all since it doesn't have a REPLICA IDENTITY or PRIMARY KEY";
 * packages/store/test/citus-add-node.test.js failed in CI).
 *
 * On a single PostgreSQL nothing is replicated logically by mailgate: no change.
 */

const { isCitus } = require('../lib/citus');

exports.up = async function up(knex) {
  if (!(await isCitus(knex))) return;
  await knex.raw("SET LOCAL citus.multi_shard_modify_mode = 'sequential'");
  await knex.raw('ALTER TABLE message_vocab_all REPLICA IDENTITY FULL');
};

exports.down = async function down(knex) {
  if (!(await isCitus(knex))) return;
  await knex.raw("SET LOCAL citus.multi_shard_modify_mode = 'sequential'");
  await knex.raw('ALTER TABLE message_vocab_all REPLICA IDENTITY DEFAULT');
};
