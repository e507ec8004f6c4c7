'use strict';

/*
 * The tsvector moves out of `messages` into its own table, `message_words` (one row per
 * message, same key, partitioned per user like messages).
 *
 * Why: a message row keeps its long values out of line (toast_tuple_target 512), all in one
 * TOAST relation per partition, row after row: subject and address text, header and body text,
 * the IMAP answers, the header JSON, and the tsvector — the largest of them (Enron large:
 * 58 MB of 183 MB). A cold substring search rechecks the header and body text of its candidate
 * rows, and on a disk with a large read-ahead (8 MB on the benchmark machine) the kernel reads
 * whole stretches of that relation around each of them: 184 MB read for 79 MB of pages used
 * (`text:would`, 5,331 candidates). Without the tsvector beside the text the same search read
 * 165 MB and took 35% less time (measured on a copy of the partition without the column,
 * docs/benchmarks.md). Word search loses nothing: its GIN index never reads the tsvector
 * (no recheck for plain words), phrase search reads it from this table's own TOAST.
 *
 * Kept exact by triggers on messages: an insert or a change of the words' source columns
 * (re)writes the row, a delete removes it. No foreign key: its check would lock every new
 * message row (a KEY SHARE lock, one WAL record each) during imports.
 *
 * Existing partitions keep the dropped column's bytes until they are rewritten (VACUUM FULL
 * messages_u<id>): dropping a column does not rewrite a table.
 */

// The bounds of 20261123150000_tsv_bounded.js: a tsvector over 1 MB is refused by PostgreSQL,
// so a smaller prefix is indexed rather than the message rejected.
const FULL = `setweight(to_tsvector('simple', left(coalesce(NEW.subject, ''), 20000)), 'A') ||
      setweight(to_tsvector('simple', left(NEW.from_text || ' ' || NEW.to_text || ' ' || NEW.cc_text, 200000)), 'B') ||
      to_tsvector('simple', left(NEW.body_text, 200000))`;
const SMALL = `setweight(to_tsvector('simple', left(coalesce(NEW.subject, ''), 2000)), 'A') ||
      setweight(to_tsvector('simple', left(NEW.from_text || ' ' || NEW.to_text || ' ' || NEW.cc_text, 20000)), 'B') ||
      to_tsvector('simple', left(NEW.body_text, 50000))`;

async function userIds(knex) {
  const r = await knex.raw(
    `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'messages'::regclass`,
  );
  return r.rows
    .map((x) => /^messages_u(\d+)$/.exec(x.relname))
    .filter(Boolean)
    .map((m) => Number(m[1]));
}

exports.up = async function up(knex) {
  await knex.raw(`
    CREATE TABLE message_words (
      user_id int NOT NULL,
      mailbox_id int NOT NULL,
      uid bigint NOT NULL,
      tsv tsvector NOT NULL,
      PRIMARY KEY (user_id, mailbox_id, uid)
    ) PARTITION BY LIST (user_id)`);
  for (const id of await userIds(knex)) {
    // id parsed from a catalog name as an integer; toast_tuple_target 128: the tsvector goes
    // out of line, so the rows a word search visits (visibility, uid) stay a few dozen bytes.
    await knex.raw(
      `CREATE TABLE message_words_u${id} PARTITION OF message_words FOR VALUES IN (${id})
         WITH (toast_tuple_target = 128)`,
    );
  }
  await knex.raw(`INSERT INTO message_words (user_id, mailbox_id, uid, tsv)
    SELECT user_id, mailbox_id, uid, tsv FROM messages WHERE tsv IS NOT NULL`);
  await knex.raw('CREATE INDEX message_words_tsv_idx ON message_words USING gin (tsv)');
  await knex.raw('DROP TRIGGER IF EXISTS messages_tsv ON messages');
  await knex.raw('DROP FUNCTION IF EXISTS mailgate_messages_tsv()');
  await knex.raw('ALTER TABLE messages DROP COLUMN tsv');
  await knex.raw(`
    CREATE FUNCTION mailgate_message_words() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE v tsvector;
    BEGIN
      BEGIN
        v := ${FULL};
      EXCEPTION WHEN program_limit_exceeded THEN
        v := ${SMALL};
      END;
      INSERT INTO message_words (user_id, mailbox_id, uid, tsv)
        VALUES (NEW.user_id, NEW.mailbox_id, NEW.uid, v)
        ON CONFLICT (user_id, mailbox_id, uid) DO UPDATE SET tsv = EXCLUDED.tsv;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE FUNCTION mailgate_message_words_gone() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM message_words
       WHERE user_id = OLD.user_id AND mailbox_id = OLD.mailbox_id AND uid = OLD.uid;
      RETURN NULL;
    END $$`);
  // UPDATE OF the source columns only: a flag change or an expunge stays a HOT update that
  // fires nothing (20261122030000_hot_updates.js).
  await knex.raw(`
    CREATE TRIGGER message_words AFTER INSERT OR UPDATE OF subject, from_text, to_text, cc_text, body_text
      ON messages FOR EACH ROW EXECUTE FUNCTION mailgate_message_words()`);
  await knex.raw(`
    CREATE TRIGGER message_words_gone AFTER DELETE
      ON messages FOR EACH ROW EXECUTE FUNCTION mailgate_message_words_gone()`);
};

exports.down = async function down(knex) {
  await knex.raw('DROP TRIGGER IF EXISTS message_words ON messages');
  await knex.raw('DROP TRIGGER IF EXISTS message_words_gone ON messages');
  await knex.raw('DROP FUNCTION IF EXISTS mailgate_message_words()');
  await knex.raw('DROP FUNCTION IF EXISTS mailgate_message_words_gone()');
  await knex.raw('ALTER TABLE messages ADD COLUMN tsv tsvector');
  await knex.raw(`UPDATE messages m SET tsv = w.tsv FROM message_words w
    WHERE w.user_id = m.user_id AND w.mailbox_id = m.mailbox_id AND w.uid = m.uid`);
  await knex.raw('CREATE INDEX messages_tsv_idx ON messages USING gin (tsv)');
  await knex.raw(`
    CREATE FUNCTION mailgate_messages_tsv() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      BEGIN
        NEW.tsv := ${FULL};
      EXCEPTION WHEN program_limit_exceeded THEN
        NEW.tsv := ${SMALL};
      END;
      RETURN NEW;
    END $$`);
  await knex.raw(`
    CREATE TRIGGER messages_tsv BEFORE INSERT OR UPDATE OF subject, from_text, to_text, cc_text, body_text
      ON messages FOR EACH ROW EXECUTE FUNCTION mailgate_messages_tsv()`);
  await knex.raw('DROP TABLE message_words');
};
