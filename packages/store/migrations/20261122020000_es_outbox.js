'use strict';

/*
 * Elasticsearch mirror: the transactional outbox.
 *
 * Every store change that the mirror must see (import batch, flag change, expunge) inserts one
 * row per changed message here, in the same transaction as the change itself: the change and
 * the promise to mirror it commit or vanish together, so an ES outage or a crash between the
 * commit and the ES write can never lose a change. A worker (@mailgate/es) ships the rows to
 * ES in `_bulk` batches and deletes them only after ES acknowledged them.
 *
 * `modseq` is the message's modseq after the change (RFC 7162: strictly increasing per
 * message); it becomes the ES document's external version, so a replayed or reordered row
 * can never overwrite a newer state, and replays are no-ops rather than second applications.
 *
 * One global queue ordered by id (not partitioned by user): it is small in steady state and
 * the worker drains it in id order.
 */

exports.up = async function up(knex) {
  await knex.raw(`
    CREATE TABLE es_outbox (
      id bigserial PRIMARY KEY,
      user_id int NOT NULL,
      mailbox_id int NOT NULL,
      uid bigint NOT NULL,
      modseq bigint NOT NULL,
      op text NOT NULL CHECK (op IN ('index', 'delete')),
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
};

exports.down = async function down(knex) {
  await knex.raw('DROP TABLE IF EXISTS es_outbox');
};
