'use strict';

/*
 * The words of a message whose subject or address text changes (an UPDATE; no code path makes
 * one today, the trigger covers it) read the body from its pieces with a plain query in the
 * trigger, not through mailgate_message_text.
 *
 * 20261130610200_text_in_pieces_only.js made the trigger call mailgate_message_text, whose
 * query (since 20261130610300_join_pieces.js an inlined ARRAY subquery) Citus cannot plan from
 * a trigger on a shard ("could not create distributed plan"); a query that names the user's
 * key with the row's values is a router query there, as the triggers' own INSERTs are.
 */

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
  await knex.raw(`
    CREATE OR REPLACE FUNCTION mailgate_message_words() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      v tsvector;
      body text := NEW.body_text;
      ps text[];
    BEGIN
      IF body = '' THEN
        SELECT array_agg(c.t ORDER BY c.seq) INTO ps FROM message_chunks c
         WHERE c.user_id = NEW.user_id AND c.mailbox_id = NEW.mailbox_id AND c.uid = NEW.uid
           AND c.kind = 1;
        body := coalesce(mailgate_join_pieces(ps), '');
      END IF;
      ${words('body')}
      RETURN NULL;
    END $$`);
};

exports.down = async function down(knex) {
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
};
