'use strict';

const { headerRow } = require('@mailgate/store');
const { docId } = require('./mapping');
const { wordsText } = require('./words');

/*
 * Documents are always built from the current PostgreSQL row (state shipping, not event
 * shipping): an outbox row only says "this message changed". Whatever order rows arrive in,
 * the last ship of a message carries its latest state, and the external version (the row's
 * modseq) lets ES drop anything older.
 */

// The message's tsvector as (position, lexeme) pairs in position order: ES indexes exactly
// PostgreSQL's words (words.js). The tsvector already covers subject, From/To/Cc text and
// the first 200,000 body characters, so the body itself is not shipped.
const lexemePairs = (tsv) =>
  `(SELECT json_agg(json_build_array(p, u.lexeme) ORDER BY p, u.lexeme)
      FROM unnest(${tsv}) u, unnest(u.positions) p)`;

const DOC_COLUMNS = `m.mailbox_id, b.name AS mailbox, m.uid, m.modseq, m.expunged, m.subject,
  m.from_name, m.from_addr, m.from_text, m.to_addrs, m.to_text, m.cc_addrs, m.cc_text,
  m.message_id, m.date, m.internal_date, m.size, m.flags, m.keywords, m.has_attachments,
  ${lexemePairs('m.tsv')} AS lexemes`;

/**
 * Current rows for (mailbox, uid) keys of one user (missing keys: purged).
 * @param {import('knex').Knex} knex
 * @param {number} userId
 * @param {Array<{mailboxId: number, uid: number}>} keys
 * @returns {Promise<Map<string, object>>} by docId
 */
async function loadRows(knex, userId, keys) {
  const r = await knex.raw(
    `SELECT ${DOC_COLUMNS} FROM messages m
       JOIN unnest(?::int[], ?::bigint[]) AS k(mailbox_id, uid)
         ON m.mailbox_id = k.mailbox_id AND m.uid = k.uid
       JOIN mailboxes b ON b.id = m.mailbox_id AND b.user_id = m.user_id
      WHERE m.user_id = ?`,
    [keys.map((k) => k.mailboxId), keys.map((k) => k.uid), userId],
  );
  return new Map(r.rows.map((row) => [docId(row.mailbox_id, row.uid), row]));
}

/**
 * One page of a user's live messages in (mailbox_id, uid) order, for reindex.
 * @param {import('knex').Knex} knex
 * @param {number} userId
 * @param {{mailboxId: number, uid: number}|null} after keyset position
 * @param {number} limit
 */
async function pageRows(knex, userId, after, limit) {
  const r = await knex.raw(
    `SELECT ${DOC_COLUMNS} FROM messages m
       JOIN mailboxes b ON b.id = m.mailbox_id AND b.user_id = m.user_id
      WHERE m.user_id = ? AND NOT m.expunged ${after ? 'AND (m.mailbox_id, m.uid) > (?, ?)' : ''}
      ORDER BY m.mailbox_id, m.uid LIMIT ?`,
    after ? [userId, after.mailboxId, after.uid, limit] : [userId, limit],
  );
  return r.rows;
}

/**
 * PostgreSQL's lexemes of query texts, as plainto_tsquery / phraseto_tsquery see them (same
 * parser, `simple` dictionary), so that ES is asked for the words pg would look up.
 * @param {import('knex').Knex} knex
 * @param {string[]} texts
 * @returns {Promise<Map<string, Array<[number, string]>>>} text → (position, lexeme) pairs
 */
async function lexemesOf(knex, texts) {
  if (!texts.length) return new Map();
  const r = await knex.raw(
    `SELECT x.t, ${lexemePairs("to_tsvector('simple', x.t)")} AS lexemes
       FROM unnest(?::text[]) AS x(t)`,
    [texts],
  );
  return new Map(r.rows.map((row) => [row.t, row.lexemes || []]));
}

const addresses = (list) =>
  (Array.isArray(list) ? list : [])
    .map((a) => (a && a.address ? String(a.address).toLowerCase() : null))
    .filter(Boolean);

// Lucene's term limit: a longer value would fail the whole document, so it is left out
// (that header is then not substring-searchable on ES; README "Operators").
const MAX_TERM_BYTES = 32766;
const raw = (s) => (s && Buffer.byteLength(s) <= MAX_TERM_BYTES ? s : null);

/**
 * The ES document of a message row: the store's header row (one shape for every path) plus
 * the search-only text fields ES indexes.
 * @param {number} userId
 * @param {object} row a DOC_COLUMNS row
 * @returns {object}
 */
function toDoc(userId, row) {
  const h = headerRow(row);
  return {
    user_id: userId,
    mailbox_id: row.mailbox_id,
    mailbox: row.mailbox,
    uid: h.uid,
    modseq: h.modseq,
    subject: h.subject,
    subject_raw: raw(h.subject),
    from_name: row.from_name,
    from: h.from && h.from.address ? h.from.address.toLowerCase() : null,
    from_text: row.from_text,
    from_raw: raw(row.from_text),
    to: addresses(h.to),
    to_text: row.to_text,
    to_raw: raw(row.to_text),
    cc: addresses(h.cc),
    cc_text: row.cc_text,
    cc_raw: raw(row.cc_text),
    words: wordsText(row.lexemes),
    message_id: h.messageId,
    date: h.date,
    internal_date: h.internalDate,
    size: h.size,
    flags: h.flags,
    keywords: h.keywords,
    has_attachments: h.hasAttachments,
  };
}

module.exports = { loadRows, pageRows, toDoc, lexemesOf };
