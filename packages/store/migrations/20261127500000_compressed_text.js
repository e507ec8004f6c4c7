'use strict';

/*
 * Issue 30.6: disk was ~15x the mail. Two long values were kept out of line and uncompressed
 * (STORAGE EXTERNAL): the raw bytes of every message (message_sources.raw) and the header and
 * body text (messages.header_text/body_text). Neither is read on a hot path any more: searches
 * read message_chunks and message_words, header scans the header columns, and a FETCH or an
 * export reads a message or a prefix of it. So both are compressed now (STORAGE EXTENDED):
 * with lz4 where the server was built with it, else pglz (the embedded server has pglz only).
 * On the Enron set (44,755 messages, 159 MB): message_sources 171 → 103 MiB, the two text
 * columns 153 → 99 MiB (pglz; copies of the tables, bench/results/disk-full-2026-11-27-before.md).
 *
 * A prefix read (substring(raw from 1 for n), an IMAP header FETCH) still reads only the start
 * of a value: PostgreSQL fetches and decompresses just enough of a compressed value for the
 * slice (pglz and lz4 both decompress a prefix).
 *
 * New rows only: values already stored keep their form until they are written again. This
 * migration does not rewrite them (minutes for a large store, under an exclusive lock).
 */

async function lz4(knex) {
  const r = await knex.raw(
    `SELECT 'lz4' = ANY(enumvals) AS ok FROM pg_settings WHERE name = 'default_toast_compression'`,
  );
  return Boolean(r.rows[0] && r.rows[0].ok);
}

exports.up = async function up(knex) {
  const method = (await lz4(knex)) ? 'lz4' : 'pglz';
  // ALTER TABLE on a partitioned table applies to every partition and to later ones.
  await knex.raw('ALTER TABLE message_sources ALTER COLUMN raw SET STORAGE EXTENDED');
  await knex.raw(`ALTER TABLE message_sources ALTER COLUMN raw SET COMPRESSION ${method}`);
  for (const col of ['header_text', 'body_text']) {
    await knex.raw(`ALTER TABLE messages ALTER COLUMN ${col} SET STORAGE EXTENDED`);
    await knex.raw(`ALTER TABLE messages ALTER COLUMN ${col} SET COMPRESSION ${method}`);
  }
};

exports.down = async function down(knex) {
  await knex.raw('ALTER TABLE message_sources ALTER COLUMN raw SET STORAGE EXTERNAL');
  await knex.raw('ALTER TABLE message_sources ALTER COLUMN raw SET COMPRESSION DEFAULT');
  for (const col of ['header_text', 'body_text']) {
    await knex.raw(`ALTER TABLE messages ALTER COLUMN ${col} SET STORAGE EXTERNAL`);
    await knex.raw(`ALTER TABLE messages ALTER COLUMN ${col} SET COMPRESSION DEFAULT`);
  }
};
