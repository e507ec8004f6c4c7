'use strict';

/*
 * Issue 30.6 (disk ≤ 3× the mail): the header and body text stored once, in its pieces.
 *
 * Until now a message's lower-cased header and body text was kept three times: in
 * messages.header_text/body_text (compressed, out of line), in its pieces (message_chunks, for
 * substring search) and as words (message_words). The copy in `messages` was read only by the
 * triggers that write the other two at insert, by IMAP COPY/MOVE (whose insert re-derives them
 * from the copied row) and by substring patterns longer than 251 bytes. On the Enron quarter
 * (11,189 messages) it was 23 MB of values in a 66 MB table.
 *
 * Now one BEFORE INSERT trigger per row writes the message's words and pieces from the text the
 * writer gave and stores the row with both columns empty (''): every write path (import COPY,
 * APPEND/LMTP, the API's append, COPY/MOVE) goes through it. The text is read back from the
 * pieces by mailgate_message_text(user, mailbox, uid, kind): COPY/MOVE pass it as the copied
 * row's text, patterns over 251 bytes test it (packages/store/lib/chunks-sql.js).
 *
 * Why per row: the statement trigger over the transition table saw the row as stored, after
 * any BEFORE trigger emptied it; so words and pieces are written before the row is. On Citus
 * both triggers were per row already (citus.js point 5).
 *
 * Reassembly: piece `seq` of a text starts at byte seq × step, moved forward to a character
 * boundary; its non-overlapping part ends where the next piece starts, and that boundary lies
 * inside the piece, so it is found from the piece's own bytes. The step is 3,800 for texts cut
 * since 20261130610100_compressed_pieces.js and 1,700 before; a text of more than one piece
 * tells which by its first piece's length (4,050-4,053 against 1,950-1,953 bytes).
 *
 * Rows stored before keep their text (a rewrite of every row is minutes under the partition's
 * lock and would keep the old bytes in the file until a VACUUM FULL); they are read the same
 * way (their pieces exist), and an UPDATE of the text columns (no code path does one) still
 * re-cuts the pieces from the new text, which that row then keeps.
 */

const { isCitus } = require('../lib/citus');

// The words of a message (migrations/20261125190000_message_words.js), from the text `body`.
const words = (body) => `
      BEGIN
        v := setweight(to_tsvector('simple', left(coalesce(NEW.subject, ''), 20000)), 'A') ||
          setweight(to_tsvector('simple', left(NEW.from_text || ' ' || NEW.to_text || ' ' || NEW.cc_text, 200000)), 'B') ||
          to_tsvector('simple', left(${body}, 200000));
      EXCEPTION WHEN program_limit_exceeded THEN
        v := setweight(to_tsvector('simple', left(coalesce(NEW.subject, ''), 2000)), 'A') ||
          setweight(to_tsvector('simple', left(NEW.from_text || ' ' || NEW.to_text || ' ' || NEW.cc_text, 20000)), 'B') ||
          to_tsvector('simple', left(${body}, 50000));
      END;
      INSERT INTO message_words (user_id, mailbox_id, uid, tsv)
        VALUES (NEW.user_id, NEW.mailbox_id, NEW.uid, v)
        ON CONFLICT (user_id, mailbox_id, uid) DO UPDATE SET tsv = EXCLUDED.tsv;`;

exports.up = async function up(knex) {
  const citus = await isCitus(knex);
  if (citus) await knex.raw("SET LOCAL citus.multi_shard_modify_mode = 'sequential'");
  // get_byte is 0-based, substring 1-based; 128-191 are UTF-8 continuation bytes.
  await knex.raw(`
    CREATE FUNCTION mailgate_message_text(u int, mb int, id bigint, k smallint) RETURNS text
      LANGUAGE plpgsql STABLE STRICT COST 10000 AS $$
    DECLARE
      ps text[];
      b bytea;
      acc bytea := ''::bytea;
      step int;
      start int := 0;
      nxt int;
      i int;
      last int;
    BEGIN
      SELECT array_agg(t ORDER BY seq) INTO ps FROM message_chunks
       WHERE user_id = u AND mailbox_id = mb AND uid = id AND kind = k;
      last := coalesce(cardinality(ps), 0);
      IF last = 0 THEN RETURN ''; END IF;
      IF last = 1 THEN RETURN ps[1]; END IF;
      step := CASE WHEN octet_length(ps[1]) >= 4050 THEN 3800 ELSE 1700 END;
      FOR i IN 1 .. last LOOP
        b := convert_to(ps[i], 'UTF8');
        IF i = last THEN
          acc := acc || b;
        ELSE
          nxt := i * step;
          WHILE get_byte(b, nxt - start) BETWEEN 128 AND 191 LOOP nxt := nxt + 1; END LOOP;
          acc := acc || substring(b FROM 1 FOR nxt - start);
          start := nxt;
        END IF;
      END LOOP;
      RETURN convert_from(acc, 'UTF8');
    END $$`);
  await knex.raw(`
    CREATE FUNCTION mailgate_message_text_out() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE v tsvector;
    BEGIN
      ${words('NEW.body_text')}
      INSERT INTO message_chunks (user_id, mailbox_id, uid, kind, seq, t)
        SELECT NEW.user_id, NEW.mailbox_id, NEW.uid, k.kind, p.seq, p.piece
          FROM (VALUES (0::smallint, NEW.header_text), (1::smallint, NEW.body_text)) AS k(kind, t),
               LATERAL mailgate_text_pieces(k.t) AS p
         WHERE k.t <> '';
      NEW.header_text := '';
      NEW.body_text := '';
      RETURN NEW;
    END $$`);
  // A change of the words' source columns (no code path makes one): the body from the row if
  // it still holds one, else from its pieces.
  await knex.raw(`
    CREATE OR REPLACE FUNCTION mailgate_message_words() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE v tsvector;
    BEGIN
      ${words(
        `CASE WHEN NEW.body_text <> '' THEN NEW.body_text
              ELSE mailgate_message_text(NEW.user_id, NEW.mailbox_id, NEW.uid, 1::smallint) END`,
      )}
      RETURN NULL;
    END $$`);
  // A change of the text (no code path makes one) re-cuts only the kind that changed: the
  // other column of a row stored from now on is empty, and its pieces stay.
  await knex.raw(`
    CREATE OR REPLACE FUNCTION mailgate_message_chunks_changed() RETURNS trigger
      LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM message_chunks
       WHERE user_id = OLD.user_id AND mailbox_id = OLD.mailbox_id AND uid = OLD.uid
         AND ((kind = 0 AND NEW.header_text IS DISTINCT FROM OLD.header_text)
           OR (kind = 1 AND NEW.body_text IS DISTINCT FROM OLD.body_text));
      INSERT INTO message_chunks (user_id, mailbox_id, uid, kind, seq, t)
        SELECT NEW.user_id, NEW.mailbox_id, NEW.uid, k.kind, p.seq, p.piece
          FROM (VALUES (0::smallint, NEW.header_text, NEW.header_text IS DISTINCT FROM OLD.header_text),
                       (1::smallint, NEW.body_text, NEW.body_text IS DISTINCT FROM OLD.body_text))
                 AS k(kind, t, changed),
               LATERAL mailgate_text_pieces(k.t) AS p
         WHERE k.changed AND k.t <> '';
      RETURN NULL;
    END $$`);
  await knex.raw('DROP TRIGGER IF EXISTS message_chunks_added ON messages');
  await knex.raw('DROP FUNCTION IF EXISTS mailgate_message_chunks_added()');
  await knex.raw('DROP FUNCTION IF EXISTS mailgate_message_chunks_added_row()');
  await knex.raw('DROP TRIGGER IF EXISTS message_words ON messages');
  await knex.raw(`
    CREATE TRIGGER message_words AFTER UPDATE OF subject, from_text, to_text, cc_text, body_text
      ON messages FOR EACH ROW EXECUTE FUNCTION mailgate_message_words()`);
  await knex.raw(`
    CREATE TRIGGER message_text_out BEFORE INSERT ON messages
      FOR EACH ROW EXECUTE FUNCTION mailgate_message_text_out()`);
};

exports.down = async function down(knex) {
  const citus = await isCitus(knex);
  if (citus) await knex.raw("SET LOCAL citus.multi_shard_modify_mode = 'sequential'");
  await knex.raw('DROP TRIGGER IF EXISTS message_text_out ON messages');
  await knex.raw('DROP FUNCTION IF EXISTS mailgate_message_text_out()');
  await knex.raw('DROP TRIGGER IF EXISTS message_words ON messages');
  await knex.raw(`
    CREATE OR REPLACE FUNCTION mailgate_message_words() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE v tsvector;
    BEGIN
      ${words('NEW.body_text')}
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE TRIGGER message_words AFTER INSERT OR UPDATE OF subject, from_text, to_text, cc_text, body_text
      ON messages FOR EACH ROW EXECUTE FUNCTION mailgate_message_words()`);
  // The pieces written at insert again: per statement on a single PostgreSQL (as
  // 20261125220000_message_chunks.js made it), per row on Citus (citus.js point 5).
  const pieces = (src) => `
      INSERT INTO message_chunks (user_id, mailbox_id, uid, kind, seq, t)
        SELECT a.user_id, a.mailbox_id, a.uid, k.kind, p.seq, p.piece
          FROM ${src} a,
               LATERAL (VALUES (0::smallint, a.header_text), (1::smallint, a.body_text)) AS k(kind, t),
               LATERAL mailgate_text_pieces(k.t) AS p
         WHERE k.t <> '';`;
  if (citus) {
    await knex.raw(`
      CREATE FUNCTION mailgate_message_chunks_added_row() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        ${pieces('(SELECT NEW.*) AS')}
        RETURN NULL;
      END $$`);
    await knex.raw(`CREATE TRIGGER message_chunks_added AFTER INSERT ON messages
      FOR EACH ROW EXECUTE FUNCTION mailgate_message_chunks_added_row()`);
  } else {
    await knex.raw(`
      CREATE FUNCTION mailgate_message_chunks_added() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        ${pieces('added')}
        RETURN NULL;
      END $$`);
    await knex.raw(`
      CREATE TRIGGER message_chunks_added AFTER INSERT ON messages
        REFERENCING NEW TABLE AS added FOR EACH STATEMENT
        EXECUTE FUNCTION mailgate_message_chunks_added()`);
  }
  await knex.raw(`
    CREATE OR REPLACE FUNCTION mailgate_message_chunks_changed() RETURNS trigger
      LANGUAGE plpgsql AS $$
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
  // Rows stored meanwhile get their text back from their pieces (the update re-cuts the same
  // pieces and recomputes the same words through the UPDATE triggers).
  await knex.raw(`
    UPDATE messages SET
      header_text = mailgate_message_text(user_id, mailbox_id, uid, 0::smallint),
      body_text = mailgate_message_text(user_id, mailbox_id, uid, 1::smallint)
     WHERE header_text = '' AND body_text = ''`);
  await knex.raw('DROP FUNCTION IF EXISTS mailgate_message_text(int, int, bigint, smallint)');
};
