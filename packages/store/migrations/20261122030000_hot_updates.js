'use strict';

/*
 * Cheap flag changes and expunges: the 2003 study's MySQL schema collapsed on expunge because
 * every change to a message row meant index maintenance. Here a flag change or an expunge
 * touches only `flags`, `keywords`, `modseq` and `expunged`, so PostgreSQL can do it as a
 * HOT update (heap-only tuple: no new entry in any index, including the six trigram and the
 * tsvector GIN indexes) — provided that
 *   - none of those columns is indexed: the (user, mailbox, modseq) index and the partial
 *     "expunged" index go (CONDSTORE's CHANGEDSINCE and the background purge filter a
 *     mailbox's rows instead, which costs them, not the client's request);
 *   - the tsvector is not a generated column, which PostgreSQL recomputes on every UPDATE:
 *     it becomes a plain column kept by a trigger on insert and on changes of the text it
 *     is built from (the same expression as before);
 *   - pages keep free room for the new row versions: fillfactor 80 on message partitions
 *     (new ones get it at creation, see @mailgate/store createPartitions).
 */

const TSV_EXPR = `setweight(to_tsvector('simple', coalesce(NEW.subject, '')), 'A') ||
      setweight(to_tsvector('simple', NEW.from_text || ' ' || NEW.to_text || ' ' || NEW.cc_text), 'B') ||
      to_tsvector('simple', left(NEW.body_text, 200000))`;

exports.up = async function up(knex) {
  await knex.raw('ALTER TABLE messages ALTER COLUMN tsv DROP EXPRESSION');
  await knex.raw(`
    CREATE FUNCTION mailgate_messages_tsv() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      NEW.tsv := ${TSV_EXPR};
      RETURN NEW;
    END $$`);
  await knex.raw(`
    CREATE TRIGGER messages_tsv BEFORE INSERT OR UPDATE OF subject, from_text, to_text, cc_text, body_text
      ON messages FOR EACH ROW EXECUTE FUNCTION mailgate_messages_tsv()`);
  await knex.raw('DROP INDEX IF EXISTS messages_modseq_idx');
  await knex.raw('DROP INDEX IF EXISTS messages_expunged_idx');
  const parts = await knex.raw(
    `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'messages'::regclass`,
  );
  for (const { relname } of parts.rows) {
    // relname comes from the catalog (messages_u<id>), not from user input.
    await knex.raw(`ALTER TABLE ${relname} SET (fillfactor = 80)`);
  }
};

exports.down = async function down(knex) {
  await knex.raw('DROP TRIGGER IF EXISTS messages_tsv ON messages');
  await knex.raw('DROP FUNCTION IF EXISTS mailgate_messages_tsv()');
  await knex.raw('CREATE INDEX messages_modseq_idx ON messages (user_id, mailbox_id, modseq)');
  await knex.raw(
    'CREATE INDEX messages_expunged_idx ON messages (user_id, mailbox_id, uid) WHERE expunged',
  );
};
