'use strict';

// Mail parsed at request time (the HTTP message view; IMAP FETCH of structure): off the
// event loop and bounded by the same budget as import. Owns the process-wide request pool;
// never blocks the calling thread on a message, whatever the message.

const path = require('node:path');
const { BoundedPool, DEFAULT_TIME_MS, DEFAULT_MEMORY_MB } = require('./bounded-pool');
const { MessageParseError } = require('./errors');

let pool = null;

/**
 * The request-time budget from the environment. The same variables as import; @mailgate/core
 * loadConfig() validates them when a server starts, so here an invalid value just means the
 * default.
 */
function requestLimits(env = process.env) {
  const int = (name, dflt) => {
    const n = Number(env[name]);
    return env[name] !== undefined && env[name] !== '' && Number.isInteger(n) && n >= 0 ? n : dflt;
  };
  return {
    workers: int('MAILGATE_RENDER_WORKERS', 1),
    timeMs: int('MAILGATE_PARSE_TIME_MS', DEFAULT_TIME_MS),
    memoryMb: int('MAILGATE_PARSE_MEMORY_MB', DEFAULT_MEMORY_MB),
  };
}

function requestPool() {
  if (!pool) {
    const l = requestLimits();
    pool = new BoundedPool({
      module: path.join(__dirname, 'request-worker.js'),
      size: l.workers,
      timeMs: l.timeMs,
      memoryMb: l.memoryMb,
    });
  }
  return pool;
}

async function runBounded(kind, raw, opts) {
  const p = requestPool();
  const [r] = await p.run([raw], { ...opts, kind, timeBudgetMs: p.timeMs });
  if (r.ok) return r.value;
  throw new MessageParseError(r.reason, r.detail);
}

/**
 * The message view (headers, text, sanitised HTML, attachment list), built in a worker
 * thread within the parse budget (MAILGATE_PARSE_TIME_MS, MAILGATE_PARSE_MEMORY_MB).
 *
 * @param {Buffer} raw
 * @param {{images?: 'blocked'|'remote', attachmentUrl?: string}} [opts] see buildView
 * @returns {Promise<import('./display').MessageView>}
 * @throws {MessageParseError} 'too-complex' over the budget, or the input is not a message
 */
function renderMessage(raw, opts = {}) {
  return runBounded('view', raw, { images: opts.images, attachmentUrl: opts.attachmentUrl });
}

/**
 * parseMessage within the request-time budget, in a worker thread: what an IMAP FETCH of
 * BODYSTRUCTURE / ENVELOPE builds on (part numbers, types, sizes, addresses).
 *
 * @param {Buffer} raw
 * @returns {Promise<import('./parse').ParsedMessage>}
 * @throws {MessageParseError}
 */
function parseMessageBounded(raw) {
  return runBounded('parse', raw, {});
}

/** Stops the request pool's threads (tests, shutdown); the next call starts new ones. */
async function closeRequestPool() {
  const p = pool;
  pool = null;
  if (p) await p.close();
}

module.exports = { renderMessage, parseMessageBounded, closeRequestPool, requestLimits };
