'use strict';

/*
 * The static part of the API's header row as a JSON fragment, built at import: the
 * whole-mailbox NDJSON scan then concatenates text instead of building JSON per row (the
 * volatile fields — flags, keywords, modseq — are spliced in at read time). Rows without it
 * (imported before this migration) fall back to building the JSON in SQL.
 */

exports.up = async function up(knex) {
  await knex.raw("ALTER TABLE messages ADD COLUMN header_json text NOT NULL DEFAULT ''");
};

exports.down = async function down(knex) {
  await knex.raw('ALTER TABLE messages DROP COLUMN header_json');
};
