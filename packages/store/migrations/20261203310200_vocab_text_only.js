'use strict';

/*
 * Substring search by the word vocabulary (20261203310100_word_vocabulary.js) trusted only what
 * the stored texts hold. Two ways it did not (review of 2026-11-28, fixtures in
 * packages/store/test/word-vocabulary.test.js):
 *
 *  1. A word lexeme of the vector is not always a substring of the lower-cased header or body
 *     text: the subject and From/To/Cc text are the row's own (mime address-list.js writes
 *     `<root@MISSING_DOMAIN>` for an address without a domain, `BobSmith` for a bare display
 *     name, `john` for `jo\hn`), and PostgreSQL's lower() in a libc locale is not JavaScript's
 *     toLowerCase (`İ`). `text:missing` matched every message "From: root".
 *     Now a word lexeme that has no separator (what a pattern's run can match) and is no run of
 *     the message's texts is marked in the vector by U+0003 + the word: a substring search
 *     takes the bare word only where that mark is absent (`'w' & !'\x03w'`; the mark is never a
 *     word, so word search is unchanged), and the substring-only form U+0001 + run as before.
 *  2. A run of 2,047 bytes passed the "<= 2,047" test, and U+0001 + run is 2,048 bytes: on
 *     PostgreSQL 17 array_to_tsvector stored it as an EMPTY lexeme (the length field has 11
 *     bits), and a tsquery word holds at most 2,046 bytes ("word is too long in tsquery" for
 *     the prefixed form of a 2,046-byte word, on every version). Now a run or a marked word
 *     over 2,045 bytes makes the message partial (confirmed on its pieces); the vocabulary and
 *     the query hold words of up to 2,045 bytes only.
 *
 * A partial message is now left out of the exact branch (`& !'\x02p'`: its vector's word
 * lexemes were not all checked against its runs when the runs could not be taken) and
 * confirmed on its pieces only. The vectors are computed again (per user: a router statement on
 * Citus), the vocabulary refilled by its trigger; its empty words (2.) and the words over 2,045
 * bytes are deleted.
 */

const { isCitus } = require('../lib/citus');

// ASCII separators of a run, as 20261203310100_word_vocabulary.js.
const SEP = String.raw`[\x01-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]`;

const SEARCH_WORDS = `
    CREATE OR REPLACE FUNCTION mailgate_search_words(subject text, addrs text, header text, body text)
      RETURNS tsvector LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
    DECLARE
      v tsvector := strip(mailgate_words(subject, addrs, body));
      runs text[];
      rs tsvector;
      marks text[];
      too_long boolean;
      too_long_mark boolean;
      partial boolean := length(header) > 200000 OR length(body) > 200000;
    BEGIN
      BEGIN
        SELECT array_agg(r) FILTER (WHERE octet_length(r) <= 2045),
               coalesce(bool_or(octet_length(r) > 2045), false)
          INTO runs, too_long
          FROM unnest(regexp_split_to_array(left(header, 200000) || ' ' || left(body, 200000),
                 E'${SEP}+')) AS r
         WHERE r <> '';
        rs := array_to_tsvector(coalesce(runs, '{}'));
        -- Word lexemes without a separator that are no run of the texts.
        SELECT array_agg(E'\\x03' || x) FILTER (WHERE octet_length(x) <= 2045),
               coalesce(bool_or(octet_length(x) > 2045), false)
          INTO marks, too_long_mark
          FROM unnest(tsvector_to_array(ts_delete(v, tsvector_to_array(rs)))) AS x
         WHERE x !~ E'${SEP}';
        RETURN v || array_to_tsvector(ARRAY(
          SELECT E'\\x01' || x FROM unnest(tsvector_to_array(ts_delete(rs, tsvector_to_array(v)))) AS x
          UNION ALL SELECT unnest(coalesce(marks, '{}'))
          UNION ALL SELECT E'\\x02p' WHERE partial OR too_long OR too_long_mark));
      EXCEPTION WHEN program_limit_exceeded THEN
        RETURN v || array_to_tsvector(ARRAY[E'\\x02p']);
      END;
    END $$`;

// Each word as a run of the text: its substring-only form, or the bare word where no mark says
// it is none. A tsquery word holds at most 2,046 bytes, so the prefixed forms of at most 2,045:
// a longer word is left out (every message with such a run, or such a marked word, is partial
// and confirmed on its pieces).
const VOCAB_QUERY = `
    CREATE OR REPLACE FUNCTION mailgate_vocab_query(words text[], cap int) RETURNS tsquery
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT CASE
        WHEN cardinality(words) > cap THEN NULL
        WHEN cardinality(words) = 0 THEN E'''\\x04'''::tsquery
        ELSE coalesce((SELECT string_agg(E'''\\x01' || e || ''' | ( ''' || e || E''' & !''\\x03' ||
                   e || ''' )', ' | ')::tsquery
                FROM (SELECT replace(replace(w, '\\', '\\\\'), '''', '''''') AS e
                        FROM unnest(words) AS w WHERE octet_length(w) <= 2045) s), E'''\\x04'''::tsquery)
      END $$`;

// The vocabulary: run-shaped words only (the marks hold U+0003, a separator).
const VOCAB_ADD = `
    CREATE OR REPLACE FUNCTION mailgate_vocab_add() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      ws text[] := ARRAY(
        SELECT w FROM (SELECT CASE WHEN left(x, 1) = E'\\x01' THEN substr(x, 2) ELSE x END AS w
                         FROM unnest(tsvector_to_array(NEW.tsv)) AS x) s
         WHERE w !~ E'${SEP}' AND w <> '' AND octet_length(w) <= 2045);
    BEGIN
      INSERT INTO message_vocab (user_id, word)
        SELECT NEW.user_id, n.w FROM (
          SELECT w FROM unnest(ws) AS w
          EXCEPT
          SELECT v.word FROM message_vocab v WHERE v.user_id = NEW.user_id AND v.word = ANY(ws)) n;
      RETURN NULL;
    END $$`;

// A message's text of one kind, from the row where it keeps it, else from its pieces.
const textOf = (id, col, kind) => `CASE WHEN m.${col} <> '' THEN m.${col}
  ELSE coalesce(mailgate_join_pieces(ARRAY(SELECT p.t FROM message_chunks p
    WHERE p.user_id = ${id} AND p.mailbox_id = m.mailbox_id AND p.uid = m.uid
      AND p.kind = ${kind} ORDER BY p.seq)), '') END`;

async function recompute(knex) {
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
}

exports.up = async function up(knex) {
  if (await isCitus(knex)) {
    await knex.raw("SET LOCAL citus.multi_shard_modify_mode = 'sequential'");
    await knex.raw('SET LOCAL citus.enable_unsafe_triggers = on');
  }
  for (const sql of [SEARCH_WORDS, VOCAB_QUERY, VOCAB_ADD]) await knex.raw(sql);
  await recompute(knex);
  // The empty words of point 2, and words no query can hold.
  await knex.raw("DELETE FROM message_vocab WHERE word = '' OR octet_length(word) > 2045");
};

exports.down = async function down(knex) {
  if (await isCitus(knex)) {
    await knex.raw("SET LOCAL citus.multi_shard_modify_mode = 'sequential'");
    await knex.raw('SET LOCAL citus.enable_unsafe_triggers = on');
  }
  // The functions as 20261203310100_word_vocabulary.js made them (its up is not re-run whole:
  // the table and triggers stay).
  // The vectors keep their marks (the query before never reads them; the way down of
  // 20261203310100 deletes them with the other prefixed lexemes): computing them again with the
  // functions before would store the empty lexemes of point 2.
  const before = require('./20261203310100_word_vocabulary');
  for (const sql of before.FUNCTIONS) await knex.raw(sql);
};
