'use strict';

const { parseMessage, MessageParseError } = require('@mailgate/mime');
// The message model turns the parsed message into its columns (pure: no database client in
// the parse workers).
const { columnRow } = require('@mailgate/model');
const { deriveMeta, hasNul } = require('@mailgate/mime/imap-meta');

/**
 * Derives the `messages` columns of one raw message, and in `row.imap` its IMAP metadata
 * (ENVELOPE, BODYSTRUCTURE, list-view lines, RFC822.SIZE: @mailgate/mime imap-meta.js; null
 * when it holds NUL, which PostgreSQL text cannot keep). Pure; runs in parse workers and for
 * every append, so all stored mail has its metadata from the start. Both can always be rebuilt
 * from the raw bytes with this function.
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
  return { ok: true, row: { ...columnRow(p, raw.length), imap: imapMetaOf(raw) } };
}

/**
 * The IMAP metadata of a message as the store keeps it, or null when it holds NUL bytes. Also
 * for a message the parser refused that is stored all the same (APPEND stores bytes). The
 * tree walk is linear and bounded (depth and part count).
 * @param {Buffer} raw
 * @returns {import('@mailgate/mime/imap-meta').ImapMeta|null}
 */
function imapMetaOf(raw) {
  const m = deriveMeta(raw);
  return hasNul(m) ? null : m;
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

module.exports = { deriveRow, imapMetaOf, handle };
