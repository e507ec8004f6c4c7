'use strict';

/*
 * Cold full header rows (issue 6's ">= 10x the best flat file, cold" check, missed at 4-5x):
 * what a persisted snapshot of the full rows would cost, measured before building one. A
 * diagnostic experiment, not product code; figures in full-rows-floor-2026-11-26.json.
 *
 *   node packages/bench/experiments/full-rows-floor-2026-11-26.js write   # once: rows by SQL, packed JSON stored
 *   node packages/bench/experiments/full-rows-floor-2026-11-26.js pglz    # after each restart + cache drop
 *   node packages/bench/experiments/full-rows-floor-2026-11-26.js ext     # the same JSON stored uncompressed
 *
 * DATABASE_URL: a bench work dir's embedded server holding the large mailbox (user id 1).
 * The snapshot row is each full row as an array (as list snapshots store list rows since
 * LIST_FORMAT 2), in a table of its own that `write` creates and the reads use.
 */

const { openDatabase } = require('@mailgate/store');
const { headerRow, HEADER_COLUMNS } = require('@mailgate/store');

const pack = (r) => [
  r.uid,
  r.from ? r.from.name : null,
  r.from ? r.from.address : null,
  r.to.map((a) => [a.name, a.address]),
  r.cc.map((a) => [a.name, a.address]),
  r.subject,
  r.date,
  r.internalDate,
  r.size,
  r.flags,
  r.keywords,
  r.hasAttachments ? 1 : 0,
  r.messageId,
  r.modseq,
  r.preview,
  r.threadId,
];
const unpack = (p) => ({
  uid: p[0],
  from: p[1] != null || p[2] != null ? { name: p[1], address: p[2] } : null,
  to: p[3].map(([name, address]) => ({ name, address })),
  cc: p[4].map(([name, address]) => ({ name, address })),
  subject: p[5],
  date: p[6],
  internalDate: p[7],
  size: p[8],
  flags: p[9],
  keywords: p[10],
  hasAttachments: p[11] === 1,
  messageId: p[12],
  modseq: p[13],
  preview: p[14],
  threadId: p[15],
});

(async () => {
  const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL }, { migrate: false });
  const c = { query: (sql, b) => db.knex.raw(sql.replace(/\$\d+/g, '?'), b || []) };
  const mode = process.argv[2];
  const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
  if (mode === 'write') {
    const t0 = process.hrtime.bigint();
    const { rows } = await c.query(
      `SELECT ${HEADER_COLUMNS} FROM messages m WHERE user_id = 1 AND NOT expunged ORDER BY uid`,
    );
    const list = rows.map(headerRow);
    const sqlMs = ms(t0);
    const body = JSON.stringify(list.map(pack));
    await c.query('DROP TABLE IF EXISTS zz_full_rows');
    await c.query('CREATE TABLE zz_full_rows (k text PRIMARY KEY, body text)');
    await c.query("INSERT INTO zz_full_rows VALUES ('pglz', $1)", [body]);
    await c.query('ALTER TABLE zz_full_rows ALTER COLUMN body SET STORAGE EXTERNAL');
    await c.query("INSERT INTO zz_full_rows VALUES ('ext', $1)", [body]);
    const sizes = await c.query(
      'SELECT k, pg_column_size(body) AS stored FROM zz_full_rows ORDER BY k',
    );
    console.log(
      JSON.stringify({
        rows: list.length,
        sqlLoadMsWarm: Math.round(sqlMs),
        fullJsonBytes: JSON.stringify(list).length,
        packedJsonBytes: body.length,
        stored: Object.fromEntries(sizes.rows.map((r) => [r.k, Number(r.stored)])),
      }),
    );
  } else {
    const t0 = process.hrtime.bigint();
    const { rows } = await c.query('SELECT body FROM zz_full_rows WHERE k = $1', [mode]);
    const fetchMs = ms(t0);
    const packed = JSON.parse(rows[0].body);
    const parseMs = ms(t0) - fetchMs;
    const list = packed.map(unpack);
    console.log(
      JSON.stringify({
        mode,
        rows: list.length,
        fetchMs: Math.round(fetchMs),
        parseMs: Math.round(parseMs),
        totalMs: Math.round(ms(t0)),
      }),
    );
  }
  await db.close();
})();
