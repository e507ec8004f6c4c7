'use strict';

/*
 * The text joined from its pieces in linear time (issue 35 item 3).
 *
 * mailgate_join_pieces (20261130610300_join_pieces.js) appended each piece's own part to a
 * bytea accumulator in its loop: `acc := acc || part` copies the whole accumulator every time,
 * so a text of n pieces cost ~n²/2 piece copies. For the importer's cap of 2,000,000 characters
 * (up to ~8 MB of UTF-8, ~2,100 pieces of 3,800 bytes) that is gigabytes of copying, paid by
 * every IMAP COPY/MOVE of such a message (the copied row's text is read back from the pieces)
 * and by every pattern over 251 bytes tested against it.
 *
 * Now the loop only finds where each piece's own part ends (one get_byte a few times a piece)
 * and keeps the parts in an array, assigned by subscript (PL/pgSQL changes an array variable
 * in place), which array_to_string joins once at the end: each byte is copied a constant
 * number of times. Same answers as before (the cut is described in the migration above); still
 * a pure function of its argument, so it runs on a Citus shard (it queries no table).
 */

// get_byte is 0-based, substring 1-based; 128-191 are UTF-8 continuation bytes.
const LINEAR = `
    CREATE OR REPLACE FUNCTION mailgate_join_pieces(ps text[]) RETURNS text
      LANGUAGE plpgsql IMMUTABLE STRICT AS $$
    DECLARE
      parts text[];
      b bytea;
      step int;
      start int := 0;
      nxt int;
      i int;
      last int := coalesce(cardinality(ps), 0);
    BEGIN
      IF last = 0 THEN RETURN ''; END IF;
      IF last = 1 THEN RETURN ps[1]; END IF;
      step := CASE WHEN octet_length(ps[1]) >= 4050 THEN 3800 ELSE 1700 END;
      parts := array_fill(NULL::text, ARRAY[last]);
      FOR i IN 1 .. last - 1 LOOP
        b := convert_to(ps[i], 'UTF8');
        nxt := i * step;
        WHILE get_byte(b, nxt - start) BETWEEN 128 AND 191 LOOP nxt := nxt + 1; END LOOP;
        parts[i] := convert_from(substring(b FROM 1 FOR nxt - start), 'UTF8');
        start := nxt;
      END LOOP;
      parts[last] := ps[last];
      RETURN array_to_string(parts, '');
    END $$`;

// The function as 20261130610300_join_pieces.js made it.
const QUADRATIC = `
    CREATE OR REPLACE FUNCTION mailgate_join_pieces(ps text[]) RETURNS text
      LANGUAGE plpgsql IMMUTABLE STRICT AS $$
    DECLARE
      b bytea;
      acc bytea := ''::bytea;
      step int;
      start int := 0;
      nxt int;
      i int;
      last int := coalesce(cardinality(ps), 0);
    BEGIN
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
    END $$`;

exports.up = async function up(knex) {
  await knex.raw(LINEAR);
};

exports.down = async function down(knex) {
  await knex.raw(QUADRATIC);
};
