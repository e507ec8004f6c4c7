'use strict';

/*
 * The column row: a parsed message (@mailgate/mime parseMessage's result) as the `messages`
 * columns the store writes, for an import batch and for a single append (APPEND, LMTP,
 * `mailgate deliver`) alike. Pure: it never parses (the importer's parse workers do) and never
 * writes; the columns can always be rebuilt from the raw bytes through parse + columnRow.
 */

const { previewOf } = require('./header-row');

/**
 * The `messages` columns of one parsed message.
 * @param {object} p parseMessage result
 * @param {number} size the raw message's length in bytes
 * @returns {object} date, from/to/cc names, addresses and texts, subject, ids, size,
 *   has_attachments, the lower-cased search texts and the preview
 */
function columnRow(p, size) {
  const date = p.date && !Number.isNaN(p.date.getTime()) ? p.date : null;
  return {
    date: date ? date.toISOString() : null,
    from_name: p.from ? p.from.name || null : null,
    from_addr: p.from ? p.from.address || null : null,
    from_text: p.fromText || '',
    to_addrs: JSON.stringify(p.to || []),
    to_text: p.toText || '',
    cc_addrs: JSON.stringify(p.cc || []),
    cc_text: p.ccText || '',
    subject: p.subject,
    message_id: p.messageId,
    in_reply_to: p.inReplyTo,
    refs: p.references || [],
    size,
    has_attachments: Boolean(p.hasAttachments),
    // Search-only columns, stored lower-cased: substring search is then a plain LIKE on a
    // lower-cased pattern, which PostgreSQL matches ~2.5x faster than ILIKE (ILIKE in a
    // multi-byte encoding lower-cases the whole text of every row it rechecks).
    // IMAP's reading (RFC 3501 6.4.4, as Dovecot): TEXT covers every part's header, BODY
    // the decoded text of every text part, text attachments and all alternatives included
    // (issue 28 item 8: a patch attached to list mail was not found).
    header_text: ((p.headerText || '') + (p.partHeaderText || '')).toLowerCase(),
    body_text: (p.searchBodyText ?? p.bodyText ?? '').toLowerCase(),
    // The list row's snippet (webmail, issue 14).
    preview: previewOf(p.bodyText),
  };
}

module.exports = { columnRow };
