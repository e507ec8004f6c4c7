'use strict';

/*
 * The IMAP metadata of messages (`message_imap`, migrations/20261129350100_message_imap.js):
 * read for a set of uids in one statement, and the backfill's two steps (the messages without
 * it, and a batch of it written). Import and append write it with the message itself
 * (import-ops.js, append-ops.js), COPY/MOVE copy it, purge and mailbox deletion delete it.
 * Must never: be written by a read (the IMAP server only reads it), or parse a message (the
 * caller derives, @mailgate/mime imap-meta.js).
 */

const { inMailbox, mustExist, isName } = require('./mailbox-ref');
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
  const { mailbox: mb, rows } = await inMailbox(
    store.knex,
    userId,
    mailbox,
    `SELECT i.uid, i.size${parts.map((p) => `, i.${p}`).join('')}
       FROM message_imap i
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
 * The kept header lines (`fields`) and RFC822.SIZE of the messages whose uid is in [lo, hi],
 * packed: one row whatever the count, the lines of every message joined into one text in uid
 * order, and the uids, sizes and end offsets as three comma-joined lists. A list view of a
 * whole mailbox (FETCH 1:* of FLAGS RFC822.SIZE BODY.PEEK[HEADER.FIELDS (…)]) read as one
 * row per message cost more in the new IMAP process than the database did: 21,282 row
 * objects and their strings, kept alive through the command, made the first FETCH after a
 * restart spend ~40% of its time collecting garbage (issue 35.3, bench/results/
 * imap-cold-listview-2026-11-30). Packed, the client makes a few large strings, no object
 * per message. Only `fields` is read: ENVELOPE/BODYSTRUCTURE stay out of the answer.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number|{name: string}} mailbox id, or byName(name) (MAILBOX_NOT_FOUND when none)
 * @param {number} lo first uid
 * @param {number} hi last uid
 * @returns {Promise<{uids: Float64Array, sizes: Uint32Array, ends: Uint32Array, fields: string}>}
 *   messages without kept metadata are absent; `fields` holds latin1 text (one char per
 *   byte), message i's lines are fields.slice(ends[i - 1] || 0, ends[i])
 */
async function getImapFieldsRange(store, userId, mailbox, lo, hi) {
  const { mailbox: mb, rows } = await inMailbox(
    store.knex,
    userId,
    mailbox,
    // ORDER BY in each aggregate: the three lists and the text must agree message by message;
    // the primary key's index gives that order already, so there is nothing to sort.
    `SELECT count(*) AS n,
            string_agg(i.uid::text, ',' ORDER BY i.uid) AS uids,
            string_agg(i.size::text, ',' ORDER BY i.uid) AS sizes,
            string_agg(length(i.fields)::text, ',' ORDER BY i.uid) AS lens,
            string_agg(i.fields, '' ORDER BY i.uid) AS fields
       FROM message_imap i
      WHERE i.user_id = ? AND i.mailbox_id = b.id AND i.uid BETWEEN ? AND ?`,
    [userId, lo, hi],
    'n',
  );
  mustExist(mailbox, mb);
  const x = rows[0];
  const n = x ? Number(x.n) : 0;
  if (!n)
    return {
      uids: new Float64Array(0),
      sizes: new Uint32Array(0),
      ends: new Uint32Array(0),
      fields: '',
    };
  // Typed arrays: one block of bytes each, which the IMAP server's list-view cache counts
  // exactly (list-view-cache.js) and the garbage collector never walks.
  const list = (text, out) => {
    let i = 0;
    let at = 0;
    for (let c = text.indexOf(','); c >= 0; c = text.indexOf(',', (at = c + 1))) {
      out[i++] = Number(text.slice(at, c));
    }
    out[i] = Number(text.slice(at));
    return out;
  };
  const ends = list(x.lens, new Uint32Array(n));
  for (let i = 1; i < n; i++) ends[i] += ends[i - 1];
  return {
    uids: list(x.uids, new Float64Array(n)),
    sizes: list(x.sizes, new Uint32Array(n)),
    ends,
    fields: x.fields || '',
  };
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
 * Keeps derived metadata (the backfill's write). A row kept meanwhile (an import or another
 * backfill) wins: the values are derived from the same bytes.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {Array<{mailboxId: number, uid: number, size: number, envelope: string, body: string, bodystructure: string, fields: string}>} list
 * @returns {Promise<number>} rows written
 */
async function putImapMeta(store, userId, list) {
  if (!list.length) return 0;
  const r = await store.knex.raw(
    `INSERT INTO message_imap (user_id, mailbox_id, uid, size, envelope, body, bodystructure, fields)
     SELECT ?, v.b, v.u, v.sz, v.e, v.bd, v.bs, v.f
       FROM unnest(?::int[], ?::bigint[], ?::int[], ?::text[], ?::text[], ?::text[], ?::text[])
            AS v(b, u, sz, e, bd, bs, f)
     ON CONFLICT (user_id, mailbox_id, uid) DO NOTHING`,
    [
      userId,
      list.map((x) => x.mailboxId),
      list.map((x) => x.uid),
      ...['size', 'envelope', 'body', 'bodystructure', 'fields'].map((k) => list.map((x) => x[k])),
    ],
  );
  return r.rowCount;
}

module.exports = { getImapMeta, getImapFieldsRange, messagesWithoutImapMeta, putImapMeta };
