'use strict';

/*
 * The tsvector of one message is bounded: PostgreSQL refuses a tsvector over 1 MB ("string is
 * too long for tsvector", SQLSTATE 54000), and before this an uncapped Subject or address list
 * (a hostile 3.5 MB Subject of 100,000 encoded words, 40,000 recipients) made the whole import
 * batch fail instead of storing the message (issue 15.3). Word search covers the first 20,000
 * characters of the subject, 200,000 of the addresses and 200,000 of the body (as before);
 * should even that be over the limit (many long distinct words in multi-byte scripts), the
 * trigger falls back to a smaller prefix rather than reject the row. Substring search still
 * reads the full columns.
 */

const FULL = `setweight(to_tsvector('simple', left(coalesce(NEW.subject, ''), 20000)), 'A') ||
      setweight(to_tsvector('simple', left(NEW.from_text || ' ' || NEW.to_text || ' ' || NEW.cc_text, 200000)), 'B') ||
      to_tsvector('simple', left(NEW.body_text, 200000))`;
const SMALL = `setweight(to_tsvector('simple', left(coalesce(NEW.subject, ''), 2000)), 'A') ||
      setweight(to_tsvector('simple', left(NEW.from_text || ' ' || NEW.to_text || ' ' || NEW.cc_text, 20000)), 'B') ||
      to_tsvector('simple', left(NEW.body_text, 50000))`;
const BEFORE = `setweight(to_tsvector('simple', coalesce(NEW.subject, '')), 'A') ||
      setweight(to_tsvector('simple', NEW.from_text || ' ' || NEW.to_text || ' ' || NEW.cc_text), 'B') ||
      to_tsvector('simple', left(NEW.body_text, 200000))`;

exports.up = async function up(knex) {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION mailgate_messages_tsv() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      BEGIN
        NEW.tsv := ${FULL};
      EXCEPTION WHEN program_limit_exceeded THEN
        NEW.tsv := ${SMALL};
      END;
      RETURN NEW;
    END $$`);
};

exports.down = async function down(knex) {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION mailgate_messages_tsv() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      NEW.tsv := ${BEFORE};
      RETURN NEW;
    END $$`);
};
