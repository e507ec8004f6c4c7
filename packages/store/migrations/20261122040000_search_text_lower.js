'use strict';

/*
 * Substring search on lower-cased text. `text:`/`body:` compile to `col LIKE lower(pattern)`
 * (@mailgate/query sql.js) over header_text/body_text, which the importer now stores
 * lower-cased: the same answer as ILIKE — which lower-cases both sides of every row it
 * rechecks — at ~2.5x less CPU per recheck. Rows imported before this migration are
 * lower-cased here (PostgreSQL lower(); the importer uses JavaScript toLowerCase(), which
 * agrees on everything but a few special cases such as U+0130).
 *
 * Also: message partitions get a smaller TOAST target (toast_tuple_target, see
 * @mailgate/store createPartitions): long search text moves out of line, so a message row is
 * a few hundred bytes, many fit a page, and a flag change or expunge fits a new row version
 * on the same page (a HOT update, touching no index).
 */

exports.up = async function up(knex) {
  await knex.raw(
    `UPDATE messages SET header_text = lower(header_text), body_text = lower(body_text)
      WHERE header_text <> lower(header_text) OR body_text <> lower(body_text)`,
  );
  const parts = await knex.raw(
    `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'messages'::regclass`,
  );
  for (const { relname } of parts.rows) {
    // relname comes from the catalog (messages_u<id>), not from user input.
    await knex.raw(`ALTER TABLE ${relname} SET (toast_tuple_target = 512)`);
  }
};

exports.down = async function down(knex) {
  const parts = await knex.raw(
    `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'messages'::regclass`,
  );
  for (const { relname } of parts.rows) {
    await knex.raw(`ALTER TABLE ${relname} RESET (toast_tuple_target)`);
  }
};
