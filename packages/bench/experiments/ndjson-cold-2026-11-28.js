'use strict';

/*
 * Issue 30.6, `messages.header_json` dropped: what the whole-mailbox NDJSON scan of a mailbox
 * the list cache does not hold (the API's cold `Accept: application/x-ndjson`, and every
 * `order=date` stream) costs when its lines are built in Node from the header columns instead
 * of spliced by COPY from the stored fragment. Both ways on one database that still has the
 * column (a `npm run bench:disk -- --only quarter --no-dovecot --keep` database of the code
 * before), alternating in one run: `old` is the COPY of the code before (its SQL frozen here),
 * `new` the cursor of store/lib/mail-ops.js streamHeadersNdjson (the same SQL, QueryStream,
 * the store's headerRow and ndjsonLine). Each round reads the largest mailbox to the end;
 * PostgreSQL's buffers are warm after the first round (the page cache is not dropped: the
 * bytes read are the same for both but for the fragment, which only the old way reads).
 * Usage: DATABASE_URL=postgres://… node ndjson-cold-2026-11-28.js [rounds]
 */
const { Client } = require('pg');
const QueryStream = require('pg-query-stream');
const { to: copyTo } = require('pg-copy-streams');
const { HEADER_COLUMNS, headerRow, ndjsonLine } = require('../../store/lib/header-row');

const OLD_LINE = `'{"uid":' || m.uid || ',' || m.header_json || ',"flags":' ||
  array_to_json(m.flags)::text || ',"keywords":' || array_to_json(m.keywords)::text ||
  ',"modseq":' || m.modseq || ',"threadId":' || coalesce(to_json(m.thread_id)::text, 'null') ||
  '}'`;

async function oldWay(client, u, b) {
  const s = client.query(
    copyTo(`COPY (SELECT ${OLD_LINE} FROM messages m
      WHERE m.user_id = ${u} AND m.mailbox_id = ${b} AND NOT m.expunged ORDER BY m.uid)
      TO STDOUT WITH (FORMAT csv, DELIMITER E'\\x02', QUOTE E'\\x01')`),
  );
  let bytes = 0;
  for await (const c of s) bytes += c.length;
  return bytes;
}

async function newWay(client, u, b) {
  const s = client.query(
    new QueryStream(
      `SELECT ${HEADER_COLUMNS} FROM messages m
        WHERE m.user_id = $1 AND m.mailbox_id = $2 AND NOT m.expunged ORDER BY m.uid`,
      [u, b],
      { batchSize: 256 },
    ),
  );
  let bytes = 0;
  let out = '';
  for await (const row of s) {
    out += ndjsonLine(headerRow(row));
    if (out.length >= 65536) {
      bytes += Buffer.byteLength(out);
      out = '';
    }
  }
  return bytes + Buffer.byteLength(out);
}

const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];

async function main() {
  const rounds = Number(process.argv[2] || 11);
  const client = new Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    const big = await client.query(
      `SELECT user_id, mailbox_id, count(*)::int AS n FROM messages WHERE NOT expunged
        GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 1`,
    );
    const { user_id: u, mailbox_id: b, n } = big.rows[0];
    const times = { old: [], new: [] };
    const bytes = {};
    for (let i = 0; i < rounds; i++) {
      for (const [name, fn] of i % 2 ? [['new', newWay], ['old', oldWay]] : [['old', oldWay], ['new', newWay]]) {
        const t0 = process.hrtime.bigint();
        bytes[name] = await fn(client, u, b);
        times[name].push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }
    const out = { messages: n, rounds, bytes, ms: {} };
    for (const k of Object.keys(times)) {
      out.ms[k] = { median: median(times[k]), min: Math.min(...times[k]), max: Math.max(...times[k]), all: times[k] };
    }
    process.stdout.write(JSON.stringify(out, null, 2) + '\n');
  } finally {
    await client.end();
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exitCode = 1;
});
