'use strict';

const { parseMessage, MessageParseError } = require('@mailgate/mime');
// The message model turns the parsed message into its columns (pure: no database client in
// the parse workers).
const { columnRow } = require('@mailgate/model');

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
  return { ok: true, row: columnRow(p, raw.length) };
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
