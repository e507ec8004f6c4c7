'use strict';

/*
 * Issue 30.6 lever 3, measured and not taken: what message_imap's rows would weigh with their
 * four text values (ENVELOPE, BODY, BODYSTRUCTURE, list-view header lines) brotli-compressed
 * by the application, one row at a time, as message_sources' raw bytes are (store
 * raw-codec.js). Reads the Enron quarter of `npm run bench:disk -- --only quarter --keep`
 * after `mailgate db start` on its MAILGATE_HOME.
 * Usage: DATABASE_URL=postgres://mailgate:PASSWORD@127.0.0.1:PORT/mailgate node imap-meta-packed-2026-11-28.js
 */
const zlib = require('node:zlib');
const { Client } = require('pg');

const pack = (s) =>
  zlib.brotliCompressSync(Buffer.from(s || ''), {
    params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: 5,
      [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
    },
  }).length;

async function main() {
  const c = new Client({ connectionString: process.env.DATABASE_URL });
  await c.connect();
  try {
    const r = await c.query(
      `SELECT pg_column_size(i.*) AS row, envelope, body, bodystructure, fields,
              pg_relation_size('message_imap_u1') AS heap
         FROM message_imap_u1 i`,
    );
    let rows = 0;
    let values = 0;
    let packedValues = 0;
    let packedAsOne = 0;
    for (const x of r.rows) {
      rows += x.row;
      const parts = [x.envelope, x.body, x.bodystructure, x.fields];
      values += parts.reduce((n, s) => n + Buffer.byteLength(s || ''), 0);
      packedValues += parts.reduce((n, s) => n + pack(s), 0);
      packedAsOne += pack(parts.join('\u0000'));
    }
    const out = {
      messages: r.rows.length,
      heapBytes: Number(r.rows[0].heap),
      rowBytes: rows,
      valueBytes: values,
      brotli5EachValue: packedValues,
      brotli5RowAsOneValue: packedAsOne,
    };
    console.log(JSON.stringify(out, null, 2));
  } finally {
    await c.end();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
