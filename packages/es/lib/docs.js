'use strict';

const { headerRow } = require('@mailgate/model');
const { wordsText } = require('./words');

/*
 * Documents are always built from the current PostgreSQL row (state shipping, not event
 * shipping): an outbox row only says "this message changed". Whatever order rows arrive in,
 * the last ship of a message carries its latest state, and the external version (the row's
 * modseq) lets ES drop anything older.
 */

const addresses = (list) =>
  (Array.isArray(list) ? list : [])
    .map((a) => (a && a.address ? String(a.address).toLowerCase() : null))
    .filter(Boolean);

// Lucene's term limit: a longer value would fail the whole document, so it is left out
// (that header is then not substring-searchable on ES; README "Operators").
const MAX_TERM_BYTES = 32766;
const raw = (s) => (s && Buffer.byteLength(s) <= MAX_TERM_BYTES ? s : null);

/**
 * The ES document of a message row: the model's header row (one shape for every path) plus
 * the search-only text fields ES indexes.
 * @param {number} userId
 * @param {object} row a mirror row (@mailgate/store mirrorRows / mirrorPage)
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

module.exports = { toDoc };
