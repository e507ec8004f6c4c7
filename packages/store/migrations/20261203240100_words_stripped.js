'use strict';

/*
 * Issue 30.6 (disk ≤ 3× the mail): the stored word vectors without positions.
 *
 * A message's tsvector kept every word's positions (and the A/B weights of subject and
 * addresses): ~35% of its bytes, read by phrase search only (phraseto_tsquery's <->) and by the
 * ES mirror. Nothing ranks by weight. Now the insert trigger stores strip(vector): the same
 * lexemes, so a word search and the GIN index are unchanged; a phrase is every word in the
 * vector AND the words in order in the text of the pieces or of the row
 * (packages/store/lib/words-sql.js phraseConfirm, which says where that differs), and the ES
 * mirror recomputes the positioned vector from the text when it ships a message
 * (packages/store/lib/mirror-ops.js), with mailgate_words, the one place the vector's
 * expression now lives (the triggers call it too).
 *
 * Rows stored before are stripped here, in one UPDATE (a row already stripped is skipped, so a
 * re-run does nothing). The old row versions stay in the table's files until VACUUM FULL
 * message_words (or a re-import) gives the space back; plain VACUUM makes it reusable.
 *
 * Citus: the functions are plain (no table read in mailgate_words), so they run on a shard;
 * the triggers call them there (citus.js point 4). The UPDATE is one statement over the
 * distributed table, an immutable function of the row itself.
 */

const { isCitus } = require('../lib/citus');

// The words of a message, as 20261130610200_text_in_pieces_only.js computed them, with its
// fallback when the vector would pass PostgreSQL's 1 MB limit.
const WORDS = `
    CREATE OR REPLACE FUNCTION mailgate_words(subject text, addrs text, body text)
      RETURNS tsvector LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
    BEGIN
      RETURN setweight(to_tsvector('simple', left(coalesce(subject, ''), 20000)), 'A') ||
        setweight(to_tsvector('simple', left(addrs, 200000)), 'B') ||
        to_tsvector('simple', left(body, 200000));
    EXCEPTION WHEN program_limit_exceeded THEN
      RETURN setweight(to_tsvector('simple', left(coalesce(subject, ''), 2000)), 'A') ||
        setweight(to_tsvector('simple', left(addrs, 20000)), 'B') ||
        to_tsvector('simple', left(body, 50000));
    END $$`;

const ADDRS = `NEW.from_text || ' ' || NEW.to_text || ' ' || NEW.cc_text`;

// The insert trigger of 20261130610200_text_in_pieces_only.js, with `vector` as the words.
const textOut = (vector) => `
    CREATE OR REPLACE FUNCTION mailgate_message_text_out() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO message_words (user_id, mailbox_id, uid, tsv)
        VALUES (NEW.user_id, NEW.mailbox_id, NEW.uid, ${vector('NEW.body_text')})
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

// The update trigger of 20261130610400_words_update_pieces.js, with `vector` as the words.
const wordsChanged = (vector) => `
    CREATE OR REPLACE FUNCTION mailgate_message_words() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      body text := NEW.body_text;
      ps text[];
    BEGIN
      IF body = '' THEN
        SELECT array_agg(c.t ORDER BY c.seq) INTO ps FROM message_chunks c
         WHERE c.user_id = NEW.user_id AND c.mailbox_id = NEW.mailbox_id AND c.uid = NEW.uid
           AND c.kind = 1;
        body := coalesce(mailgate_join_pieces(ps), '');
      END IF;
      INSERT INTO message_words (user_id, mailbox_id, uid, tsv)
        VALUES (NEW.user_id, NEW.mailbox_id, NEW.uid, ${vector('body')})
        ON CONFLICT (user_id, mailbox_id, uid) DO UPDATE SET tsv = EXCLUDED.tsv;
      RETURN NULL;
    END $$`;

const stripped = (body) => `strip(mailgate_words(NEW.subject, ${ADDRS}, ${body}))`;

exports.up = async function up(knex) {
  const citus = await isCitus(knex);
  if (citus) await knex.raw("SET LOCAL citus.multi_shard_modify_mode = 'sequential'");
  await knex.raw(WORDS);
  await knex.raw(textOut(stripped));
  await knex.raw(wordsChanged(stripped));
  await knex.raw('UPDATE message_words SET tsv = strip(tsv) WHERE tsv <> strip(tsv)');
};

exports.down = async function down(knex) {
  const citus = await isCitus(knex);
  if (citus) await knex.raw("SET LOCAL citus.multi_shard_modify_mode = 'sequential'");
  // The triggers as the earlier migrations left them, with their own copy of the expression.
  await require('./20261130610400_words_update_pieces').up(knex);
  await knex.raw(`
    CREATE OR REPLACE FUNCTION mailgate_message_text_out() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE v tsvector;
    BEGIN
      BEGIN
        v := setweight(to_tsvector('simple', left(coalesce(NEW.subject, ''), 20000)), 'A') ||
          setweight(to_tsvector('simple', left(${ADDRS}, 200000)), 'B') ||
          to_tsvector('simple', left(NEW.body_text, 200000));
      EXCEPTION WHEN program_limit_exceeded THEN
        v := setweight(to_tsvector('simple', left(coalesce(NEW.subject, ''), 2000)), 'A') ||
          setweight(to_tsvector('simple', left(${ADDRS}, 20000)), 'B') ||
          to_tsvector('simple', left(NEW.body_text, 50000));
      END;
      INSERT INTO message_words (user_id, mailbox_id, uid, tsv)
        VALUES (NEW.user_id, NEW.mailbox_id, NEW.uid, v)
        ON CONFLICT (user_id, mailbox_id, uid) DO UPDATE SET tsv = EXCLUDED.tsv;
      INSERT INTO message_chunks (user_id, mailbox_id, uid, kind, seq, t)
        SELECT NEW.user_id, NEW.mailbox_id, NEW.uid, k.kind, p.seq, p.piece
          FROM (VALUES (0::smallint, NEW.header_text), (1::smallint, NEW.body_text)) AS k(kind, t),
               LATERAL mailgate_text_pieces(k.t) AS p
         WHERE k.t <> '';
      NEW.header_text := '';
      NEW.body_text := '';
      RETURN NEW;
    END $$`);
  // The positions back, from the text: per user, so that on Citus each statement is a router
  // query on one shard (the pieces' subquery names the user by a constant).
  const users = (await knex.raw('SELECT DISTINCT user_id FROM message_words')).rows;
  for (const { user_id: u } of users) {
    const id = Number(u);
    await knex.raw(`
      UPDATE message_words w SET tsv = mailgate_words(m.subject,
          m.from_text || ' ' || m.to_text || ' ' || m.cc_text,
          CASE WHEN m.body_text <> '' THEN m.body_text
               ELSE mailgate_join_pieces(ARRAY(SELECT p.t FROM message_chunks p
                      WHERE p.user_id = ${id} AND p.mailbox_id = m.mailbox_id AND p.uid = m.uid
                        AND p.kind = 1 ORDER BY p.seq)) END)
        FROM messages m
       WHERE w.user_id = ${id} AND m.user_id = ${id}
         AND m.mailbox_id = w.mailbox_id AND m.uid = w.uid`);
  }
  await knex.raw('DROP FUNCTION IF EXISTS mailgate_words(text, text, text)');
};
