'use strict';

/*
 * More room for HOT row versions: fillfactor 50 on message partitions (was 80).
 *
 * A message row is ~700 bytes (header columns, the header JSON fragment, recipient lists),
 * so a page at fillfactor 80 holds ~9 rows and ~1.6 KB of free space: two new row versions.
 * Expunging 20% of a mailbox (and the un-hide or flag change that may follow before the
 * page is pruned) needs more than that on many pages; each row that does not fit is a
 * non-HOT update, which inserts into all ten indexes — six trigram GINs and the tsvector
 * GIN included — and costs ~50x a HOT update. Measured on the 21,282-message Enron mailbox:
 * expunge of 20% (4,256 rows) 130–570 ms at fillfactor 80, 36–65 ms at fillfactor 50, for
 * a heap of 25 MB instead of 14 MB (the search text is out of line, in TOAST, either way).
 *
 * Existing partitions get the setting for pages written from now on; `VACUUM FULL
 * messages_u<id>` (which takes an exclusive lock) applies it to a user's existing rows.
 */

// Migrations stay self-contained (a shared helper could change under an old migration), so
// this one lists the partitions itself, as the earlier ones do.
async function setFillfactor(knex, value) {
  const parts = await knex.raw(
    `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'messages'::regclass`,
  );
  for (const { relname } of parts.rows) {
    // relname comes from the catalog (messages_u<id>), value is one of two literals below.
    await knex.raw(`ALTER TABLE ${relname} SET (fillfactor = ${Number(value)})`);
  }
}

exports.up = (knex) => setFillfactor(knex, 50);

exports.down = (knex) => setFillfactor(knex, 80);
