'use strict';

/*
 * Issue 30.6: raw sources compressed by the store (store/lib/raw-codec.js). PostgreSQL never
 * compresses a row under ~2 KB, which is half of the Enron messages; the store now writes each
 * message brotli-compressed and names the form in raw_codec. Rows stored before keep their
 * bytes as they are, with codec 0 (the default), and still read: nothing is rewritten.
 *
 * A constant default is only catalogue work (no table rewrite), on a partitioned table it
 * reaches every partition and later ones, and on Citus the ALTER is propagated to the shards.
 */

exports.up = async function up(knex) {
  await knex.raw('ALTER TABLE message_sources ADD COLUMN raw_codec smallint NOT NULL DEFAULT 0');
};

exports.down = async function down(knex) {
  // Packed rows would be unreadable without their codec: unpacking them needs the application.
  const r = await knex.raw('SELECT 1 FROM message_sources WHERE raw_codec <> 0 LIMIT 1');
  if (r.rows.length) throw new Error('message_sources holds compressed rows: not reverted');
  await knex.raw('ALTER TABLE message_sources DROP COLUMN raw_codec');
};
