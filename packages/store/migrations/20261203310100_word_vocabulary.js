'use strict';

/*
 * Issues 35 (TEXT search as fast as Dovecot's fts-xapian) and 30.6 (disk): a substring term
 * (`text:`, `body:`, IMAP SEARCH TEXT/BODY) is answered by a per-user word vocabulary and the
 * message word vectors, not by a trigram GIN over the text's pieces.
 *
 * Until now a substring was a LIKE over message_chunks narrowed by its trigram GIN: every piece
 * whose trigrams match is decompressed and LIKEd (`depending` on the Enron large mailbox: 827
 * pieces for 218 hits), and the GIN was 113 MB of the 642 MB of the full Enron set. Now:
 *
 *   message_vocab (user_id, word)  every run-shaped lexeme of the user's vectors (no separator
 *                                  in it), once, with a trigram GIN
 *
 * and a pattern made of letters and digits is looked up there (`word LIKE '%q%'`: a few words
 * out of ~180,000), then the vectors' GIN gives the messages holding one of those words. For
 * that to be exact (a substring search answers exactly what LIKE over the text answers), each
 * vector now also holds, as "substring-only" lexemes prefixed by U+0001 (a character no query
 * word can produce: the parser treats it as a blank), every maximal run of the lower-cased
 * header and body text between ASCII separators (space, control and ASCII punctuation) that
 * the word lexemes do not already hold. The parser's lexemes alone are not enough: it drops
 * tags (`<b>`), protocol heads (`http://`) and entities (`&amp;`), splits `-1x` and `0e0x` into
 * a number and a word, and the vector covered subject, addresses and body, not the other header
 * lines that TEXT searches. A run is a maximal stretch of text without a separator, so a
 * pattern without separators that occurs in the text lies inside one run, and every run is a
 * substring of the text: the vocabulary's words containing the pattern name exactly the
 * messages that hold it. Where a run cannot be a lexeme (over 2,047 bytes), or the text passes
 * the vector's limits (200,000 characters of header or of body, or PostgreSQL's 1 MB per
 * vector), the vector gets the marker lexeme U+0002 'p' ("partial") and a search confirms that
 * message on its pieces (LIKE by primary key), which stay. A word search never sees either kind:
 * its tsquery comes from the parser, which never yields U+0001 or U+0002.
 *
 * The vocabulary is kept by a trigger on message_words (every write path writes the vector
 * there: import, APPEND/LMTP, COPY/MOVE, the update trigger), without a unique key, so that no
 * writer ever waits for another (see VOCAB_ADD). Words of expunged mail stay (the vocabulary is
 * a superset: the vectors decide). Per user partitions as the other
 * tables (user-ops.js createPartitions); on Citus one DEFAULT partition distributed by user_id
 * and co-located (citus.js), the trigger running on the shard like the others (point 4).
 *
 * Existing vectors are recomputed here from the pieces (the vocabulary trigger fills the
 * vocabulary as they are written), per user, then the pieces' trigram GIN is dropped (its only
 * users were substring terms; phrases find candidates by the words' GIN and read the pieces by
 * primary key).
 */

const { isCitus, distributeTable } = require('../lib/citus');

// ASCII separators of a run: control characters, space and punctuation (upper-case letters are
// no separator: the texts are lower-cased before they are stored).
const SEP = String.raw`[\x01-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]+`;

const SEARCH_WORDS = `
    CREATE OR REPLACE FUNCTION mailgate_search_words(subject text, addrs text, header text, body text)
      RETURNS tsvector LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
    DECLARE
      v tsvector := strip(mailgate_words(subject, addrs, body));
      runs text[];
      too_long boolean;
      partial boolean := length(header) > 200000 OR length(body) > 200000;
    BEGIN
      BEGIN
        SELECT array_agg(r) FILTER (WHERE octet_length(r) <= 2047),
               coalesce(bool_or(octet_length(r) > 2047), false)
          INTO runs, too_long
          FROM unnest(regexp_split_to_array(left(header, 200000) || ' ' || left(body, 200000),
                 E'${SEP}')) AS r
         WHERE r <> '';
        RETURN v || array_to_tsvector(ARRAY(
          SELECT E'\\x01' || x FROM unnest(tsvector_to_array(
            ts_delete(array_to_tsvector(coalesce(runs, '{}')), tsvector_to_array(v)))) AS x
          UNION ALL SELECT E'\\x02p' WHERE partial OR too_long));
      EXCEPTION WHEN program_limit_exceeded THEN
        RETURN v || array_to_tsvector(ARRAY[E'\\x02p']);
      END;
    END $$`;

// The tsquery of the words a pattern's run is in (each as a word and as a substring-only
// lexeme); NULL over `cap` words (the caller then reads the pieces), a lexeme no vector holds
// when there is none. Pure: the caller reads the vocabulary (on Citus a function that reads a
// distributed table is refused on a shard).
const VOCAB_QUERY = `
    CREATE OR REPLACE FUNCTION mailgate_vocab_query(words text[], cap int) RETURNS tsquery
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT CASE
        WHEN cardinality(words) > cap THEN NULL
        WHEN cardinality(words) = 0 THEN E'''\\x03'''::tsquery
        ELSE (SELECT string_agg(q || ' | ' || E'''\\x01' || substr(q, 2), ' | ')::tsquery
                FROM (SELECT '''' || replace(replace(w, '\\', '\\\\'), '''', '''''') || '''' AS q
                        FROM unnest(words) AS w) s)
      END $$`;

// Both queries where both are known; the one known otherwise.
const QUERY_AND = `
    CREATE OR REPLACE FUNCTION mailgate_tsquery_and(a tsquery, b tsquery) RETURNS tsquery
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT CASE WHEN a IS NULL THEN b WHEN b IS NULL THEN a ELSE a && b END $$`;

// The marker of a vector that does not cover its text.
const PARTIAL = `
    CREATE OR REPLACE FUNCTION mailgate_partial() RETURNS tsquery
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT E'''\\x02p'''::tsquery $$`;

// The vector's runs the vocabulary lacks, added: only lexemes without a separator (and so not
// the marker), since every run of the text is such a lexeme of the vector, as a word or
// prefixed; a compound word (`john.smith@enron.com`, 35% of the distinct lexemes of the Enron
// quarter) would only make the vocabulary bigger and the lookups more. No unique key: an INSERT … ON CONFLICT waits
// for every other transaction inserting the same new word, and two import batches (or a batch
// and a delivery) that insert their messages' words in different orders deadlocked. Here
// nothing waits: two transactions that meet the same new word at once both add it, and the
// copy is harmless (the search reads DISTINCT words).
const VOCAB_ADD = `
    CREATE OR REPLACE FUNCTION mailgate_vocab_add() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      ws text[] := ARRAY(
        SELECT w FROM (SELECT CASE WHEN left(x, 1) = E'\\x01' THEN substr(x, 2) ELSE x END AS w
                         FROM unnest(tsvector_to_array(NEW.tsv)) AS x) s
         WHERE w !~ E'${SEP}');
    BEGIN
      INSERT INTO message_vocab (user_id, word)
        SELECT NEW.user_id, n.w FROM (
          SELECT w FROM unnest(ws) AS w
          EXCEPT
          SELECT v.word FROM message_vocab v WHERE v.user_id = NEW.user_id AND v.word = ANY(ws)) n;
      RETURN NULL;
    END $$`;

const ADDRS = `NEW.from_text || ' ' || NEW.to_text || ' ' || NEW.cc_text`;

// The insert trigger of 20261203240100_words_stripped.js with the substring-only lexemes.
const TEXT_OUT = `
    CREATE OR REPLACE FUNCTION mailgate_message_text_out() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO message_words (user_id, mailbox_id, uid, tsv)
        VALUES (NEW.user_id, NEW.mailbox_id, NEW.uid,
                mailgate_search_words(NEW.subject, ${ADDRS}, NEW.header_text, NEW.body_text))
        ON CONFLICT (user_id, mailbox_id, uid) DO UPDATE SET tsv = EXCLUDED.tsv;
      INSERT INTO message_chunks (user_id, mailbox_id, uid, kind, seq, t)
        SELECT NEW.user_id, NEW.mailbox_id, NEW.uid, k.kind, p.seq, p.piece
          FROM (VALUES (0::smallint, NEW.header_text), (1::smallint, NEW.body_text)) AS k(kind, t),
               LATERAL mailgate_text_pieces(k.t) AS p
         WHERE k.t <> '';
      NEW.header_text := '';
      NEW.body_text := '';
      RETURN NEW;
    END $$`;

// A text of the row NEW read back from its pieces where the row keeps none (plain queries
// naming the user: router queries on Citus, 20261130610400_words_update_pieces.js).
const FROM_PIECES = (col, kind) => `
      IF ${col} = '' THEN
        SELECT array_agg(c.t ORDER BY c.seq) INTO ps FROM message_chunks c
         WHERE c.user_id = NEW.user_id AND c.mailbox_id = NEW.mailbox_id AND c.uid = NEW.uid
           AND c.kind = ${kind};
        ${col} := coalesce(mailgate_join_pieces(ps), '');
      END IF;`;

// The update trigger of 20261203240100_words_stripped.js with the substring-only lexemes.
const WORDS_CHANGED = `
    CREATE OR REPLACE FUNCTION mailgate_message_words() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      header text := NEW.header_text;
      body text := NEW.body_text;
      ps text[];
    BEGIN${FROM_PIECES('header', 0)}${FROM_PIECES('body', 1)}
      INSERT INTO message_words (user_id, mailbox_id, uid, tsv)
        VALUES (NEW.user_id, NEW.mailbox_id, NEW.uid,
                mailgate_search_words(NEW.subject, ${ADDRS}, header, body))
        ON CONFLICT (user_id, mailbox_id, uid) DO UPDATE SET tsv = EXCLUDED.tsv;
      RETURN NULL;
    END $$`;

// A message's text of one kind, from the row where it keeps it, else from its pieces.
const textOf = (id, col, kind) => `CASE WHEN m.${col} <> '' THEN m.${col}
  ELSE coalesce(mailgate_join_pieces(ARRAY(SELECT p.t FROM message_chunks p
    WHERE p.user_id = ${id} AND p.mailbox_id = m.mailbox_id AND p.uid = m.uid
      AND p.kind = ${kind} ORDER BY p.seq)), '') END`;

exports.up = async function up(knex) {
  const citus = await isCitus(knex);
  if (citus) {
    await knex.raw("SET LOCAL citus.multi_shard_modify_mode = 'sequential'");
    await knex.raw('SET LOCAL citus.enable_unsafe_triggers = on');
  }
  await knex.raw(`
    CREATE TABLE message_vocab (
      user_id int NOT NULL,
      word text NOT NULL
    ) PARTITION BY LIST (user_id)`);
  await knex.raw('CREATE INDEX message_vocab_word_idx ON message_vocab (user_id, word)');
  await knex.raw(
    'CREATE INDEX message_vocab_word_trgm ON message_vocab USING gin (word gin_trgm_ops)',
  );
  if (citus) {
    await distributeTable(knex, 'message_vocab');
  } else {
    const users = await knex.raw('SELECT id FROM users ORDER BY id');
    for (const { id } of users.rows) {
      const n = Number(id);
      const exists = await knex.raw('SELECT to_regclass(?) AS t', [`message_words_u${n}`]);
      if (!exists.rows[0].t) continue; // a user whose partitions were never made
      await knex.raw(
        `CREATE TABLE message_vocab_u${n} PARTITION OF message_vocab FOR VALUES IN (${n})`,
      );
    }
  }
  for (const sql of [SEARCH_WORDS, VOCAB_QUERY, QUERY_AND, PARTIAL, VOCAB_ADD]) {
    await knex.raw(sql);
  }
  await knex.raw(`CREATE TRIGGER message_vocab_added AFTER INSERT ON message_words
      FOR EACH ROW EXECUTE FUNCTION mailgate_vocab_add()`);
  await knex.raw(`CREATE TRIGGER message_vocab_changed AFTER UPDATE OF tsv ON message_words
      FOR EACH ROW WHEN (OLD.tsv IS DISTINCT FROM NEW.tsv) EXECUTE FUNCTION mailgate_vocab_add()`);
  await knex.raw(TEXT_OUT);
  await knex.raw(WORDS_CHANGED);
  // Existing vectors, per user: on Citus each statement is a router query on one shard (the
  // pieces' subquery names the user by a constant).
  const users = (await knex.raw('SELECT DISTINCT user_id FROM message_words')).rows;
  for (const { user_id: u } of users) {
    const id = Number(u);
    await knex.raw(`
      UPDATE message_words w SET tsv = mailgate_search_words(m.subject,
          m.from_text || ' ' || m.to_text || ' ' || m.cc_text,
          ${textOf(id, 'header_text', 0)}, ${textOf(id, 'body_text', 1)})
        FROM messages m
       WHERE w.user_id = ${id} AND m.user_id = ${id}
         AND m.mailbox_id = w.mailbox_id AND m.uid = w.uid`);
  }
  await knex.raw('DROP INDEX IF EXISTS message_chunks_t_trgm');
};

exports.down = async function down(knex) {
  const citus = await isCitus(knex);
  if (citus) {
    await knex.raw("SET LOCAL citus.multi_shard_modify_mode = 'sequential'");
    await knex.raw('SET LOCAL citus.enable_unsafe_triggers = on');
  }
  await knex.raw('CREATE INDEX message_chunks_t_trgm ON message_chunks USING gin (t gin_trgm_ops)');
  await knex.raw('DROP TRIGGER IF EXISTS message_vocab_added ON message_words');
  await knex.raw('DROP TRIGGER IF EXISTS message_vocab_changed ON message_words');
  await knex.raw('DROP TABLE IF EXISTS message_vocab');
  // The triggers as 20261203240100_words_stripped.js left them, and the vectors without the
  // substring-only lexemes and the marker.
  await require('./20261203240100_words_stripped').up(knex);
  await knex.raw(`UPDATE message_words SET tsv = ts_delete(tsv, ARRAY(
      SELECT x FROM unnest(tsvector_to_array(tsv)) AS x WHERE x ~ '^[\\x01-\\x03]'))`);
  for (const f of [
    'mailgate_vocab_add()',
    'mailgate_partial()',
    'mailgate_tsquery_and(tsquery, tsquery)',
    'mailgate_vocab_query(text[], int)',
    'mailgate_search_words(text, text, text, text)',
  ]) {
    await knex.raw(`DROP FUNCTION IF EXISTS ${f}`);
  }
};

// The functions as this migration made them (20261203310200_vocab_text_only.js's way down).
exports.FUNCTIONS = [SEARCH_WORDS, VOCAB_QUERY, VOCAB_ADD];
