'use strict';

/*
 * The text read back from its pieces without a function that queries a table (Citus).
 *
 * 20261130610200_text_in_pieces_only.js read a message's text back with
 * mailgate_message_text(user, mailbox, uid, kind), a function that SELECTs from message_chunks.
 * On Citus a statement is pushed down to the shard that holds the user, and a function there
 * that queries a distributed table is refused ("cannot execute a distributed query from a
 * query on a shard"): patterns over 251 bytes and IMAP COPY/MOVE failed on the cluster. Now the
 * statement reads the pieces itself, in a subquery on the same user (co-located: one shard),
 * and a pure function joins them: mailgate_join_pieces(pieces in seq order)
 * (packages/store/lib/chunks-sql.js `textOf` writes the subquery). mailgate_message_text stays
 * for a single PostgreSQL's own use (the words trigger on an UPDATE, the way down), now through
 * the same join.
 *
 * The join: piece i (0-based) starts at byte i × step moved forward to a character boundary;
 * its own part ends where the next piece starts, which lies inside it, so it is found from its
 * bytes. The step is 3,800 for texts cut since 20261130610100_compressed_pieces.js and 1,700
 * before; a text of more than one piece tells which by its first piece's length (4,050-4,053
 * against 1,950-1,953 bytes).
 */

exports.up = async function up(knex) {
  // get_byte is 0-based, substring 1-based; 128-191 are UTF-8 continuation bytes.
  await knex.raw(`
    CREATE FUNCTION mailgate_join_pieces(ps text[]) RETURNS text
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
    END $$`);
  await knex.raw(`
    CREATE OR REPLACE FUNCTION mailgate_message_text(u int, mb int, id bigint, k smallint)
      RETURNS text LANGUAGE sql STABLE STRICT AS $$
      SELECT mailgate_join_pieces(ARRAY(SELECT t FROM message_chunks
        WHERE user_id = u AND mailbox_id = mb AND uid = id AND kind = k ORDER BY seq))
    $$`);
};

exports.down = async function down(knex) {
  // The function as 20261130610200 made it (the join inline), before the join function goes.
  await knex.raw(`
    CREATE OR REPLACE FUNCTION mailgate_message_text(u int, mb int, id bigint, k smallint)
      RETURNS text LANGUAGE plpgsql STABLE STRICT AS $$
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
  await knex.raw('DROP FUNCTION IF EXISTS mailgate_join_pieces(text[])');
};
