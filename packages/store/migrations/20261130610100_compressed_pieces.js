'use strict';

/*
 * Issue 30.6 (disk ≤ 3× the mail): the text pieces of substring search, compressed in place.
 *
 * 20261125220000_message_chunks.js cut each text into pieces of ~1,950 bytes (a new piece every
 * 1,700) and kept them inline and uncompressed, so a warm search would not pay to decompress.
 * PostgreSQL compresses a row's values only when the row passes TOAST_TUPLE_THRESHOLD (~2 KB),
 * whatever toast_tuple_target says, so pieces of ~1,950 bytes could never be compressed: 46 MB of
 * heap for 45 MB of text on the Enron quarter (11,189 messages). Now:
 *
 *   - pieces of ~4,050 bytes, a new one every 3,800: the same 250-byte overlap, so a pattern of
 *     up to 251 bytes still lies whole inside one piece (the argument in the migration above and
 *     in packages/store/lib/chunks-sql.js depends on the overlap only). Pieces cut by the old
 *     step stay exact: old and new rows can live side by side, and nothing is re-cut;
 *   - toast_tuple_target 128 with STORAGE MAIN kept: a row over ~2 KB is compressed in place
 *     (lz4 where the server has it, else pglz) and moved out of line only as a last resort, so
 *     a search still reads one relation in order.
 *
 * Measured on the Enron quarter (copies of its pieces in one database, one-pass CREATE INDEX
 * each; bench/results/disk-quarter-2026-11-28-pieces.txt, by
 * packages/bench/experiments/compressed-pieces-2026-11-28.sql): heap 48 → 29 MB, indexes 46 →
 * 37 MB (the shipped ones as the import left them; fewer pieces, fewer repeated trigrams); warm `text:would` (2,712 hits) 41 → 78 ms,
 * `text:depending` (106) 5.9 → 11.4 ms (medians of 6, loaded machine). The large mailbox's
 * targets are 150 and 50 ms (docs/benchmarks.md). Pieces of ~8 KB saved 5 MB more and made the
 * rare search 25 ms: not taken.
 *
 * Existing pieces keep their cut and stay uncompressed until their message is written again
 * (re-cutting every message would rewrite the whole table under its triggers' locks);
 * `VACUUM FULL` does not compress them either (the rows stay under the threshold).
 */

const { isCitus } = require('../lib/citus');

async function lz4(knex) {
  const r = await knex.raw(
    `SELECT 'lz4' = ANY(enumvals) AS ok FROM pg_settings WHERE name = 'default_toast_compression'`,
  );
  return Boolean(r.rows[0] && r.rows[0].ok);
}

// get_byte is 0-based, substring 1-based; 128-191 are UTF-8 continuation bytes.
const pieces = (step, len) => `
    CREATE OR REPLACE FUNCTION mailgate_text_pieces(t text) RETURNS TABLE (seq int, piece text)
      LANGUAGE plpgsql IMMUTABLE STRICT AS $$
    DECLARE
      b bytea;
      n int;
      i int := 0;
      a int;
      e int;
    BEGIN
      IF octet_length(t) <= ${len} THEN
        seq := 0;
        piece := t;
        RETURN NEXT;
        RETURN;
      END IF;
      b := convert_to(t, 'UTF8');
      n := length(b);
      LOOP
        a := i * ${step};
        WHILE a < n AND get_byte(b, a) BETWEEN 128 AND 191 LOOP a := a + 1; END LOOP;
        e := least(i * ${step} + ${len}, n);
        WHILE e < n AND get_byte(b, e) BETWEEN 128 AND 191 LOOP e := e + 1; END LOOP;
        seq := i;
        piece := convert_from(substring(b FROM a + 1 FOR e - a), 'UTF8');
        RETURN NEXT;
        EXIT WHEN e >= n;
        i := i + 1;
      END LOOP;
    END $$`;

// Storage parameters are per physical table: every partition (per user, or Citus's DEFAULT one).
async function partitions(knex) {
  const r = await knex.raw(
    `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'message_chunks'::regclass ORDER BY 1`,
  );
  return r.rows.map((x) => x.relname).filter((n) => /^message_chunks_(u\d+|all)$/.test(n));
}

exports.up = async function up(knex) {
  if (await isCitus(knex)) {
    await knex.raw("SET LOCAL citus.multi_shard_modify_mode = 'sequential'");
  }
  await knex.raw(pieces(3800, 4050));
  for (const name of await partitions(knex)) {
    // name matched ^message_chunks_(u\d+|all)$ above
    await knex.raw(`ALTER TABLE ${name} SET (toast_tuple_target = 128)`);
  }
  if (await lz4(knex)) {
    await knex.raw('ALTER TABLE message_chunks ALTER COLUMN t SET COMPRESSION lz4');
  }
};

exports.down = async function down(knex) {
  if (await isCitus(knex)) {
    await knex.raw("SET LOCAL citus.multi_shard_modify_mode = 'sequential'");
  }
  await knex.raw(pieces(1700, 1950));
  for (const name of await partitions(knex)) {
    await knex.raw(`ALTER TABLE ${name} SET (toast_tuple_target = 8160)`);
  }
  await knex.raw('ALTER TABLE message_chunks ALTER COLUMN t SET COMPRESSION DEFAULT');
};
