'use strict';

/*
 * Message partitions are auto-analyzed after changes of 4x their rows, not 10%
 * (autovacuum_analyze_scale_factor 4). Autoanalyze counts every updated row, and on a
 * messages partition almost every update is a flag change, an expunge's hide or an un-hide:
 * changes that move none of the text, date and size statistics the searches are planned by.
 * A STORE +FLAGS (\Deleted) and EXPUNGE of 20% of a 21,282-message mailbox (8,512 row
 * updates) was enough to start one. That ANALYZE is not free for the other sessions: it holds
 * a snapshot for its whole run (1.9 s unthrottled here, over 10 s at autovacuum's cost delay;
 * the tsvector and text columns are detoasted), and while it does PostgreSQL cannot prune the
 * dead row versions of any table in the database. Flag changes and expunges then find no room
 * on their pages and stop being HOT updates: each non-HOT one inserts into all indexes, the
 * six trigram GINs and the tsvector GIN included. Measured over the imap door (bench
 * expunge_20pct, large): 600-900 of the 4,256 hides went non-HOT and the EXPUNGE took
 * 0.8-1.7 s instead of 40-60 ms whenever an autoanalyze of a messages partition was computing
 * statistics beside it.
 *
 * Inserts still get statistics: every import ANALYZEs the user's partitions at its end
 * (store analyzeUser). Autovacuum's VACUUM keeps its default trigger: it holds no snapshot
 * that stops pruning. New partitions get the setting at creation (store createPartitions).
 */

// Migrations stay self-contained, as the fillfactor migration does: the partitions listed here.
async function setScale(knex, value) {
  const parts = await knex.raw(
    `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'messages'::regclass`,
  );
  for (const { relname } of parts.rows) {
    // relname comes from the catalog (messages_u<id>).
    if (value == null) {
      await knex.raw(`ALTER TABLE ${relname} RESET (autovacuum_analyze_scale_factor)`);
    } else {
      await knex.raw(
        `ALTER TABLE ${relname} SET (autovacuum_analyze_scale_factor = ${Number(value)})`,
      );
    }
  }
}

exports.up = (knex) => setScale(knex, 4);

exports.down = (knex) => setScale(knex, null);
