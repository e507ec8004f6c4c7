'use strict';

// The worker-thread entry of ./request.js (see ./bounded-pool.js): one message per item.

const { buildView } = require('./display');
const { parseMessage } = require('./parse');

/**
 * @param {Uint8Array} raw
 * @param {{kind: 'view'|'parse', timeBudgetMs?: number, images?: string, attachmentUrl?: string}} opts
 */
function handle(raw, opts) {
  const buf = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  try {
    const value =
      opts.kind === 'view'
        ? buildView(buf, opts)
        : parseMessage(buf, { timeBudgetMs: opts.timeBudgetMs, allowMboxFromLine: true });
    return { ok: true, value };
  } catch (err) {
    if (err && err.name === 'MessageParseError') {
      return { ok: false, reason: err.reason, detail: err.message };
    }
    return { ok: false, reason: 'parse-failed', detail: String(err && err.message) };
  }
}

module.exports = { handle };
