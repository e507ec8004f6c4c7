'use strict';

/*
 * The IMAP metadata of messages (`message_imap`, migrations/20261129350100_message_imap.js, and
 * its list-view header lines in the narrow `message_imap_lines`, 20261203210100): read for a set
 * of uids in one statement, and the backfill's two steps (the messages without
 * it, and a batch of it written). Import and append write it with the message itself
 * (import-ops.js, append-ops.js), COPY/MOVE copy it, purge and mailbox deletion delete it.
 * Must never: be written by a read (the IMAP server only reads it), or parse a message (the
 * caller derives, @mailgate/mime imap-meta.js).
 */

const { errors } = require('@mailgate/core');
const { inMailbox, mailboxQuery, mustExist, isName, byName } = require('./mailbox-ref');
const { rowsAsSent } = require('./cursor');
const { decodeRaw } = require('./raw-codec');

/** The kept values besides size (columns of message_imap), each readable alone. */
const PARTS = ['envelope', 'body', 'bodystructure', 'fields'];

/**
 * The kept metadata of the given uids. A set that is most of a uid range is read as that
 * range (one index range scan over rows stored in uid order; a FETCH 1:* of a whole mailbox),
 * a sparse one by its uids; rows outside the set are dropped here.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number|{name: string}} mailbox id, or byName(name) (MAILBOX_NOT_FOUND when none)
 * @param {number[]} uids
 * @param {{parts?: string[]}} [opts] the values to read, of envelope, body, bodystructure and
 *   fields (default all; size always): a list view reads the header lines only
 * @returns {Promise<Map<number, {envelope?: string, body?: string, bodystructure?: string, fields?: string, size: number}>>}
 *   only the uids whose metadata is kept
 */
async function getImapMeta(store, userId, mailbox, uids, opts = {}) {
  const parts = (opts.parts || PARTS).filter((p) => PARTS.includes(p));
  const out = new Map();
  if (!uids.length && !isName(mailbox)) return out;
  let lo = Infinity;
  let hi = -Infinity;
  for (const u of uids) {
    if (u < lo) lo = u;
    if (u > hi) hi = u;
  }
  const dense = uids.length > 64 && uids.length * 2 >= hi - lo + 1;
  // The lines live in message_imap_lines, the rest in message_imap: one table when only one
  // side is asked (a list view: the lines), else both joined (a message has both rows or none).
  const lines = parts.includes('fields');
  const rest = parts.filter((p) => p !== 'fields');
  const from = !rest.length
    ? 'message_imap_lines i'
    : `message_imap i${
        lines
          ? ` JOIN message_imap_lines l
                ON l.user_id = i.user_id AND l.mailbox_id = i.mailbox_id AND l.uid = i.uid`
          : ''
      }`;
  const cols = parts.map((p) => (p === 'fields' && rest.length ? ', l.fields' : `, i.${p}`));
  const { mailbox: mb, rows } = await inMailbox(
    store.knex,
    userId,
    mailbox,
    `SELECT i.uid, i.size${cols.join('')}
       FROM ${from}
      WHERE i.user_id = ? AND i.mailbox_id = b.id AND ${
        dense ? 'i.uid BETWEEN ? AND ?' : 'i.uid = ANY(?::bigint[])'
      }`,
    dense ? [userId, lo, hi] : [userId, uids],
  );
  mustExist(mailbox, mb);
  const want = dense ? new Set(uids) : null;
  for (const x of rows) {
    const uid = Number(x.uid);
    if (want && !want.has(uid)) continue;
    const m = { size: x.size };
    for (const p of parts) m[p] = x[p];
    out.set(uid, m);
  }
  return out;
}

/**
 * One kept value (`part`: the list-view header lines `fields` by default, or the ENVELOPE, BODY
 * or BODYSTRUCTURE) and RFC822.SIZE of the messages whose uid is in [lo, hi], packed: one row
 * per CHUNK_UIDS uids, each with the values of its messages joined into one text and their
 * uids, sizes and byte lengths as three comma-joined lists; joined here into one text and four
 * typed arrays. A list view of a whole mailbox
 * (FETCH 1:* of FLAGS RFC822.SIZE BODY.PEEK[HEADER.FIELDS (…)]) read as one row per message
 * cost more in the new IMAP process than the database did: 21,282 row objects and their
 * strings, kept alive through the command, made the first FETCH after a restart spend ~40% of
 * its time collecting garbage (issue 35.3, bench/results/imap-cold-listview-2026-11-30).
 * Packed, the client makes a few strings per row, no object per message. Only `part` is read:
 * the other values stay out of the answer (a full-mailbox ENVELOPE fetch, a client's first
 * sync, is read the same way: its row objects were the same cost).
 *
 * The statement counts no characters (`octet_length` is a byte count PostgreSQL reads from the
 * value's header): byte lengths become character offsets here by counting the few characters
 * past U+007F (two bytes each in UTF-8). The aggregates take their rows in uid order: the
 * grouping sorts the rows by uid / CHUNK_UIDS anyway (GroupAggregate), and with `ORDER BY
 * i.uid` in the aggregates PostgreSQL sorts them once by (k, uid) instead, at no measurable cost
 * (EXPLAIN ANALYZE, 2026-11-28). Without it the sort on k alone (not stable) handed rows of a
 * group in any order, and the IMAP process of a cold list view spent 8-25 ms of CPU permuting
 * 21,282 entries back into uid order (profiled). A read out of uid order is still put in order
 * here (inUidOrder).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number|{name: string}} mailbox id, or byName(name) (MAILBOX_NOT_FOUND when none)
 * @param {number} lo first uid
 * @param {number} hi last uid
 * @param {string} [part] one of PARTS (default fields)
 * @param {{onPart?: (packed: object) => (void|Promise<void>)}} [opts] onPart: the read handed
 *   over in parts as PostgreSQL sends them (one per row, in uid order, each shaped as the
 *   whole read), awaited one at a time; the call then resolves to undefined (partsAsRead)
 * @returns {Promise<{uids: Float64Array, sizes: Uint32Array, starts: Uint32Array, ends: Uint32Array, text: string}|undefined>}
 *   in uid order; messages without kept metadata are absent; `text` holds latin1 text (one
 *   char per byte), message i's value is text.slice(starts[i], ends[i])
 */
async function getImapFieldsRange(store, userId, mailbox, lo, hi, part = 'fields', opts = {}) {
  // A column name in the statement: only one of the kept values' own names.
  if (!PARTS.includes(part)) throw new errors.INVALID_PARAMETER(`not a kept value: ${part}`);
  // The rows come out of the grouping in k order (GroupAggregate): ORDER BY adds no sort, and
  // lets rowsAsSent hand them over in uid order. (One aggregate per CHUNK_UIDS uids over an
  // index range scan each, whose first row left at once, was tried: slower on a cold list view,
  // bench/results/imap-cold-listview-2026-11-28-s8.)
  const inner = `SELECT i.uid / ${CHUNK_UIDS} AS k, count(*) AS n,
            string_agg(i.uid::text, ',' ORDER BY i.uid) AS uids,
            string_agg(i.size::text, ',' ORDER BY i.uid) AS sizes,
            string_agg(octet_length(i.${part})::text, ',' ORDER BY i.uid) AS lens,
            string_agg(i.${part}, '' ORDER BY i.uid) AS text
       FROM ${part === 'fields' ? 'message_imap_lines' : 'message_imap'} i
      WHERE i.user_id = ? AND i.mailbox_id = b.id AND i.uid BETWEEN ? AND ?
      GROUP BY 1 ORDER BY 1`;
  const bindings = [userId, lo, hi];
  if (opts.onPart) return partsAsRead(store, userId, mailbox, inner, bindings, opts.onPart);
  const { mailbox: mb, rows } = await inMailbox(store.knex, userId, mailbox, inner, bindings, 'n');
  mustExist(mailbox, mb);
  return packRows(rows);
}

let partsRead = 0;

/**
 * getImapFieldsRange with `onPart`: each row packed alone (packRows) and handed over as
 * PostgreSQL sends it (cursor.js rowsAsSent), in uid order, so that the caller writes the
 * first messages' responses while PostgreSQL still aggregates and sends the others. Measured
 * on a cold list view of the large Enron mailbox, the IMAP process otherwise waited for the
 * last of its 42 rows before it began (issue 35.3, bench/results/imap-cold-listview-2026-11-28-s8).
 * Emitted as knex 'query' and 'query-response' events like the store's other statements.
 * @returns {Promise<undefined>} once every part is handed over (MAILBOX_NOT_FOUND when none)
 */
async function partsAsRead(store, userId, mailbox, inner, bindings, onPart) {
  const { sql, bindings: values } = mailboxQuery(store.knex, userId, mailbox, inner, bindings)
    .toSQL()
    .toNative();
  const query = { method: 'raw', sql, bindings: values, __knexQueryUid: `parts-${++partsRead}` };
  store.knex.emit('query', query);
  let found = false;
  const n = await rowsAsSent(store.knex, sql, values, async (row) => {
    found = true;
    // The mailbox's row alone (no kept value in the range) carries no part.
    if (row.n === null || row.n === undefined) return;
    await onPart(packRows([row]));
  });
  store.knex.emit('query-response', { rowCount: n, rows: new Array(n) }, query);
  if (!found) mustExist(mailbox, null);
  return undefined;
}

/**
 * The rows of the packed read (k, n, uids, sizes, lens, text: as getImapFieldsRange's statement
 * answers them) joined into one text and four typed arrays, in uid order. Pure: the server's
 * warm-up (warmImapReads, the service's warm-up backend) runs it over synthetic rows too.
 * @param {Array<{k: number|string, n: number|string, uids: string, sizes: string, lens: string, text: string|null}>} rows
 * @returns {{uids: Float64Array, sizes: Uint32Array, starts: Uint32Array, ends: Uint32Array, text: string}}
 */
function packRows(rows) {
  rows.sort((a, b) => Number(a.k) - Number(b.k));
  let n = 0;
  for (const x of rows) n += Number(x.n);
  const uids = new Float64Array(n);
  const sizes = new Uint32Array(n);
  const ends = new Uint32Array(n);
  const texts = [];
  let at = 0;
  let chars = 0;
  for (const x of rows) {
    const m = Number(x.n);
    const text = x.text || '';
    numbers(x.uids, uids, at);
    numbers(x.sizes, sizes, at);
    const mine = numbers(x.lens, ends.subarray(at, at + m), 0);
    mine[0] += chars;
    for (let i = 1; i < m; i++) mine[i] += mine[i - 1];
    charEnds(mine, text, chars);
    texts.push(text);
    chars += text.length;
    at += m;
  }
  return inUidOrder(uids, sizes, ends, texts.length === 1 ? texts[0] : texts.join(''));
}

// Messages per row of the packed read, by uid: one row of a whole mailbox (21,282 messages,
// 11 MB) cost the driver a buffer grown by doubling to 16 MB and copied each time, and
// PostgreSQL ~80 ms to send the one value; rows of ~250 KB cost neither.
const CHUNK_UIDS = 512;

// Typed arrays: one block of bytes each, which the IMAP server's list-view cache counts
// exactly (list-view-cache.js) and the garbage collector never walks.
const packedOf = (uids, sizes, starts, ends, text) => ({ uids, sizes, starts, ends, text });

/** A comma-joined list of numbers into `out` from index `i`. */
function numbers(text, out, i) {
  let at = 0;
  for (let c = text.indexOf(','); c >= 0; c = text.indexOf(',', (at = c + 1))) {
    out[i++] = Number(text.slice(at, c));
  }
  out[i] = Number(text.slice(at));
  return out;
}

/**
 * Byte end offsets (UTF-8, as PostgreSQL counts) into character end offsets of `text`, in
 * place. The kept lines are latin1: U+0000-U+007F one byte, U+0080-U+00FF two, so an end moves
 * back by the extra bytes of the characters past U+007F before it. All-ASCII text (the total
 * bytes equal the length) costs nothing; else one regular-expression pass finds those
 * characters. (Any other character is counted right too, though kept lines hold none: a
 * UTF-16 half of a 4-byte character has one extra byte, the rest of the BMP two.)
 * @param {Uint32Array} ends byte ends, each + base
 * @param {string} text
 * @param {number} base characters before `text` in the whole text (the ends count them)
 */
function charEnds(ends, text, base) {
  const n = ends.length;
  if (!n || ends[n - 1] - base === text.length) return;
  // eslint-disable-next-line no-control-regex
  const re = /[^\u0000-\u007f]/g;
  let extra = 0;
  let j = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const p = m.index;
    // Character p starts at byte p + extra: the ends before it count the extra bytes so far.
    while (j < n && ends[j] - base <= p + extra) ends[j++] -= extra;
    const c = text.charCodeAt(p);
    extra += c < 0x800 || (c >= 0xd800 && c <= 0xdfff) ? 1 : 2;
  }
  while (j < n) ends[j++] -= extra;
}

/**
 * The packed read in uid order: as it came when it did (the usual case: mail stored in uid
 * order), else its four lists permuted by uid (rows stored out of order: a purge's holes
 * filled again, a backfill); the text stays as read, each message found by its start and end.
 */
function inUidOrder(uids, sizes, ends, text) {
  const n = uids.length;
  const starts = new Uint32Array(n);
  for (let i = 1; i < n; i++) starts[i] = ends[i - 1];
  let sorted = true;
  for (let i = 1; i < n && sorted; i++) sorted = uids[i - 1] < uids[i];
  if (sorted) return packedOf(uids, sizes, starts, ends, text);
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  order.sort((a, b) => uids[a] - uids[b]);
  const permuted = (from, to) => {
    for (let i = 0; i < n; i++) to[i] = from[order[i]];
    return to;
  };
  return packedOf(
    permuted(uids, new Float64Array(n)),
    permuted(sizes, new Uint32Array(n)),
    permuted(starts, new Uint32Array(n)),
    permuted(ends, new Uint32Array(n)),
    text,
  );
}

/**
 * Messages of a user without kept metadata, with their bytes, in (mailbox, uid) order: the
 * backfill's next batch. Resumable by construction: what a finished batch wrote is not
 * returned again. Messages whose metadata cannot be kept (NUL bytes) are skipped by passing
 * the last position seen as `after`.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {{limit?: number, after?: {mailboxId: number, uid: number}|null}} [opts]
 * @returns {Promise<Array<{mailboxId: number, uid: number, raw: Buffer}>>}
 */
async function messagesWithoutImapMeta(store, userId, opts = {}) {
  const after = opts.after || { mailboxId: 0, uid: 0 };
  const r = await store.knex.raw(
    `SELECT m.mailbox_id, m.uid, s.raw, s.raw_codec
       FROM messages m
       JOIN message_sources s
         ON s.user_id = m.user_id AND s.mailbox_id = m.mailbox_id AND s.uid = m.uid
      WHERE m.user_id = ? AND NOT m.expunged AND (m.mailbox_id, m.uid) > (?, ?)
        AND NOT EXISTS (SELECT 1 FROM message_imap i
                         WHERE i.user_id = m.user_id AND i.mailbox_id = m.mailbox_id
                           AND i.uid = m.uid)
      ORDER BY m.mailbox_id, m.uid
      LIMIT ?`,
    [userId, after.mailboxId, after.uid, opts.limit || 500],
  );
  return r.rows.map((x) => ({
    mailboxId: Number(x.mailbox_id),
    uid: Number(x.uid),
    raw: decodeRaw(x.raw, x.raw_codec),
  }));
}

/**
 * Keeps derived metadata (the backfill's write), the lines in message_imap_lines, in one
 * transaction. A row kept meanwhile (an import or another backfill) wins: the values are derived
 * from the same bytes, and the lines are written only beside a row written here.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {Array<{mailboxId: number, uid: number, size: number, envelope: string, body: string, bodystructure: string, fields: string}>} list
 * @returns {Promise<number>} rows written
 */
async function putImapMeta(store, userId, list) {
  if (!list.length) return 0;
  return store.knex.transaction(async (trx) => {
    const r = await trx.raw(
      `INSERT INTO message_imap (user_id, mailbox_id, uid, size, envelope, body, bodystructure)
       SELECT ?, v.b, v.u, v.sz, v.e, v.bd, v.bs
         FROM unnest(?::int[], ?::bigint[], ?::int[], ?::text[], ?::text[], ?::text[])
              AS v(b, u, sz, e, bd, bs)
       ON CONFLICT (user_id, mailbox_id, uid) DO NOTHING
       RETURNING mailbox_id, uid`,
      [
        userId,
        list.map((x) => x.mailboxId),
        list.map((x) => x.uid),
        ...['size', 'envelope', 'body', 'bodystructure'].map((k) => list.map((x) => x[k])),
      ],
    );
    const written = new Set(r.rows.map((x) => `${x.mailbox_id}/${x.uid}`));
    const mine = list.filter((x) => written.has(`${x.mailboxId}/${x.uid}`));
    if (mine.length) {
      await trx.raw(
        `INSERT INTO message_imap_lines (user_id, mailbox_id, uid, size, fields)
         SELECT ?, v.b, v.u, v.sz, v.f
           FROM unnest(?::int[], ?::bigint[], ?::int[], ?::text[]) AS v(b, u, sz, f)`,
        [userId, ...['mailboxId', 'uid', 'size', 'fields'].map((k) => mine.map((x) => x[k]))],
      );
    }
    return r.rows.length;
  });
}

/**
 * Readies this process's connections for the first list view and ENVELOPE fetch (issue 35.3,
 * the IMAP server's warm-up): the packed reads of both values run once for user id 0, which no
 * user has (ids start at 1), so they read no user's rows and write nothing. What they leave
 * behind is a backend's catalog caches for the tables and the partition descriptors the
 * planner prunes by (built at a backend's first statement on a partitioned table, per
 * backend), and knex's and the driver's code paths compiled. `connections` reads run at once,
 * so that as many pooled connections are readied.
 * @param {import('./pg-store').PgStore} store
 * @param {{connections?: number}} [opts] default 2
 * @returns {Promise<void>}
 */
async function warmImapReads(store, opts = {}) {
  const n = Math.max(1, opts.connections || 2);
  const one = async () => {
    for (const part of ['fields', 'envelope']) {
      try {
        await getImapFieldsRange(store, 0, byName('INBOX'), 1, 1, part);
      } catch (err) {
        // The expected answer: user 0 has no INBOX.
        if (!err || err.code !== 'MAILBOX_NOT_FOUND') throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: n }, one));
}

module.exports = {
  getImapMeta,
  getImapFieldsRange,
  packRows,
  warmImapReads,
  messagesWithoutImapMeta,
  putImapMeta,
};
