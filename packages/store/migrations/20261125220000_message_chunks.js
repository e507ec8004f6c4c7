'use strict';

/*
 * Substring search reads the header and body text from `message_chunks`: each text cut into
 * overlapping pieces of about 1,950 bytes (a new piece every 1,700 bytes, so neighbours share
 * about 250; every cut moved forward to the next UTF-8 character boundary), stored inline, one
 * row per piece, with the trigram index on the pieces. The same text
 * stays in messages.header_text/body_text (the words trigger and long patterns read it).
 *
 * Why: a message's header and body text lived out of line in the TOAST relation of its
 * partition, beside every other long value of the row. A cold `text:would` (a quarter of the
 * Enron large mailbox) read the whole 28 MB heap and 47 MB of TOAST in small scattered reads
 * (~20 µs each on the benchmark disk, which reads 1.3-2.2 GB/s sequentially): 165-230 ms. From
 * pieces stored in order in a heap of their own it reads one relation almost sequentially, and
 * the trigram index answers per piece, so fewer false candidates reach the recheck: cold
 * ~1% 130-190 → 51-53 ms, ~25% 165-230 → 84-100 ms; warm ~1% 26 → 7 ms, ~25% 35 → 33 ms
 * (psql on a copy of the large partition, docs/benchmarks.md).
 *
 * Exactness: a pattern of up to 251 bytes that occurs in a text lies whole inside one piece
 * (it starts within 1,700 bytes after some piece's nominal start, at or after that piece's
 * actual start, and the piece runs to at least 1,950 bytes after its nominal start), so
 * `piece LIKE '%p%'` over the pieces is the same answer as `text LIKE '%p%'`. A longer pattern
 * uses its longest prefix of at most 251 bytes to find candidates and the full text to decide
 * (packages/store/lib/chunks-sql.js; the numbers are repeated there).
 *
 * Cut in bytes, not characters: substr() on UTF-8 text counts characters from the start of the
 * value on every call, so cutting a 2,000,000-character body (the importer's cap) took 8.5 s;
 * byte offsets into a bytea take 24 ms for the same body.
 *
 * Kept exact by triggers on messages, as message_words is: an insert or a change of the header
 * or body text rewrites a message's pieces, a delete removes them. The trigram indexes on
 * messages.header_text/body_text go: nothing searches those columns through them any more.
 *
 * Pieces inline: STORAGE MAIN and toast_tuple_target 8160 (its maximum), so a piece is neither
 * compressed (a warm search would pay to decompress) nor moved out of line; four fit a page.
 */

// Each text's pieces, for the rows of a (transition) table `src` aliased `a`.
const PIECES = (src) => `
    SELECT a.user_id, a.mailbox_id, a.uid, k.kind, p.seq, p.piece
      FROM ${src} a,
           LATERAL (VALUES (0::smallint, a.header_text), (1::smallint, a.body_text)) AS k(kind, t),
           LATERAL mailgate_text_pieces(k.t) AS p
     WHERE k.t <> ''`;

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
  // kind 0: the header text, 1: the body text (RFC 3501 BODY searches only the body).
  await knex.raw(`
    CREATE TABLE message_chunks (
      user_id int NOT NULL,
      mailbox_id int NOT NULL,
      uid bigint NOT NULL,
      kind smallint NOT NULL,
      seq int NOT NULL,
      t text NOT NULL,
      PRIMARY KEY (user_id, mailbox_id, uid, kind, seq)
    ) PARTITION BY LIST (user_id)`);
  await knex.raw('ALTER TABLE message_chunks ALTER COLUMN t SET STORAGE MAIN');
  for (const id of await userIds(knex)) {
    // id parsed from a catalog name as an integer
    await knex.raw(
      `CREATE TABLE message_chunks_u${id} PARTITION OF message_chunks FOR VALUES IN (${id})
         WITH (toast_tuple_target = 8160)`,
    );
  }
  // get_byte is 0-based, substring 1-based; 128-191 are UTF-8 continuation bytes.
  await knex.raw(`
    CREATE FUNCTION mailgate_text_pieces(t text) RETURNS TABLE (seq int, piece text)
      LANGUAGE plpgsql IMMUTABLE STRICT AS $$
    DECLARE
      b bytea;
      n int;
      i int := 0;
      a int;
      e int;
    BEGIN
      IF octet_length(t) <= 1950 THEN
        seq := 0;
        piece := t;
        RETURN NEXT;
        RETURN;
      END IF;
      b := convert_to(t, 'UTF8');
      n := length(b);
      LOOP
        a := i * 1700;
        WHILE a < n AND get_byte(b, a) BETWEEN 128 AND 191 LOOP a := a + 1; END LOOP;
        e := least(i * 1700 + 1950, n);
        WHILE e < n AND get_byte(b, e) BETWEEN 128 AND 191 LOOP e := e + 1; END LOOP;
        seq := i;
        piece := convert_from(substring(b FROM a + 1 FOR e - a), 'UTF8');
        RETURN NEXT;
        EXIT WHEN e >= n;
        i := i + 1;
      END LOOP;
    END $$`);
  // In key order: each message's pieces side by side in the heap, as the trigger writes them.
  await knex.raw(`INSERT INTO message_chunks (user_id, mailbox_id, uid, kind, seq, t)
    ${PIECES('messages')}
     ORDER BY 1, 2, 3, 4, 5`);
  await knex.raw('CREATE INDEX message_chunks_t_trgm ON message_chunks USING gin (t gin_trgm_ops)');
  await knex.raw('DROP INDEX IF EXISTS messages_header_text_trgm');
  await knex.raw('DROP INDEX IF EXISTS messages_body_text_trgm');
  // Inserts and deletes: once per statement, over its transition table (an import batch is
  // one statement; a per-row trigger cost 20% of the import rate, 587 against 700-754 msg/s).
  await knex.raw(`
    CREATE FUNCTION mailgate_message_chunks_added() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO message_chunks (user_id, mailbox_id, uid, kind, seq, t)
        ${PIECES('added')};
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE FUNCTION mailgate_message_chunks_gone() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM message_chunks c USING gone g
       WHERE c.user_id = g.user_id AND c.mailbox_id = g.mailbox_id AND c.uid = g.uid;
      RETURN NULL;
    END $$`);
  // A change of the text itself (no code path does it today): per row, the columns named.
  await knex.raw(`
    CREATE FUNCTION mailgate_message_chunks_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM message_chunks
       WHERE user_id = OLD.user_id AND mailbox_id = OLD.mailbox_id AND uid = OLD.uid;
      INSERT INTO message_chunks (user_id, mailbox_id, uid, kind, seq, t)
        SELECT NEW.user_id, NEW.mailbox_id, NEW.uid, k.kind, p.seq, p.piece
          FROM (VALUES (0::smallint, NEW.header_text), (1::smallint, NEW.body_text)) AS k(kind, t),
               LATERAL mailgate_text_pieces(k.t) AS p
         WHERE k.t <> '';
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE TRIGGER message_chunks_added AFTER INSERT ON messages
      REFERENCING NEW TABLE AS added FOR EACH STATEMENT
      EXECUTE FUNCTION mailgate_message_chunks_added()`);
  await knex.raw(`
    CREATE TRIGGER message_chunks_gone AFTER DELETE ON messages
      REFERENCING OLD TABLE AS gone FOR EACH STATEMENT
      EXECUTE FUNCTION mailgate_message_chunks_gone()`);
  // UPDATE OF the text columns only: flag changes and expunges stay HOT updates that fire
  // nothing (20261122030000_hot_updates.js).
  await knex.raw(`
    CREATE TRIGGER message_chunks_changed AFTER UPDATE OF header_text, body_text ON messages
      FOR EACH ROW EXECUTE FUNCTION mailgate_message_chunks_changed()`);
};

exports.down = async function down(knex) {
  for (const t of ['added', 'gone', 'changed']) {
    await knex.raw(`DROP TRIGGER IF EXISTS message_chunks_${t} ON messages`);
    await knex.raw(`DROP FUNCTION IF EXISTS mailgate_message_chunks_${t}()`);
  }
  await knex.raw(
    'CREATE INDEX messages_header_text_trgm ON messages USING gin (header_text gin_trgm_ops)',
  );
  await knex.raw(
    'CREATE INDEX messages_body_text_trgm ON messages USING gin (body_text gin_trgm_ops)',
  );
  await knex.raw('DROP TABLE message_chunks');
  await knex.raw('DROP FUNCTION IF EXISTS mailgate_text_pieces(text)');
};
