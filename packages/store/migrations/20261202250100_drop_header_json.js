'use strict';

/*
 * Issue 30.6: `messages.header_json` dropped. It held each row's static header-row fields as a
 * JSON fragment (~60 MB of heap and TOAST on the Enron set, docs/disk.md) so that the cold
 * whole-mailbox NDJSON scan could splice lines in SQL. That scan now builds its lines in Node
 * from the header columns, with the list cache's own line builder (store/lib/mail-ops.js
 * streamHeadersNdjson), so the fragment is a second copy of the columns nobody reads.
 *
 * DROP COLUMN is catalogue work only: it reaches every partition (and later ones) and, on
 * Citus, is propagated to the shards. Rows stored before keep their bytes until they are
 * rewritten (VACUUM FULL, or the purge's moves); new rows store nothing for it.
 */

exports.up = async function up(knex) {
  await knex.raw('ALTER TABLE messages DROP COLUMN IF EXISTS header_json');
};

exports.down = async function down(knex) {
  // The old code reads a fragment for every row: add the column back and fill it with the
  // backfill migration's frozen expression.
  await knex.raw("ALTER TABLE messages ADD COLUMN header_json text NOT NULL DEFAULT ''");
  await require('./20261123143000_header_json_backfill').up(knex);
};
