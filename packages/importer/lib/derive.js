'use strict';

const { parseMessage, MessageParseError } = require('@mailgate/mime');
// The pure header-row module only: parse workers need no database client.
const { previewOf } = require('@mailgate/store/header-row');

/**
 * Derives the `messages` columns of one raw message. Pure; runs in parse workers.
 * Columns can always be rebuilt from the raw bytes with this function.
 *
 * @param {Buffer} raw
 * @param {{timeBudgetMs?: number}} [opts] parse budget ('too-complex' past it)
 * @returns {{ok: true, row: object} | {ok: false, reason: string, detail: string}}
 */
function deriveRow(raw, opts = {}) {
  let p;
  try {
    p = parseMessage(raw, { timeBudgetMs: opts.timeBudgetMs });
  } catch (err) {
    if (err instanceof MessageParseError || err.name === 'MessageParseError') {
      return { ok: false, reason: err.reason || 'unparsable', detail: err.message };
    }
    return { ok: false, reason: 'parse-failed', detail: String(err && err.message) };
  }
  const date = p.date && !Number.isNaN(p.date.getTime()) ? p.date : null;
  return {
    ok: true,
    row: {
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
      size: raw.length,
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
    },
  };
}

/**
 * The parse-worker entry (see @mailgate/mime BoundedPool): a posted Buffer arrives as a
 * Uint8Array view.
 * @param {Uint8Array} raw
 * @param {{timeBudgetMs?: number}} [opts]
 */
function handle(raw, opts) {
  return deriveRow(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength), opts);
}

module.exports = { deriveRow, handle };
