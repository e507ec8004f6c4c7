'use strict';

// Mail parsed at request time (the HTTP message view; IMAP FETCH of structure): off the
// event loop and bounded by the same budget as import. Owns the process-wide request pool;
// never blocks the calling thread on a message, whatever the message.

const path = require('node:path');
const { BoundedPool, DEFAULT_TIME_MS, DEFAULT_MEMORY_MB } = require('./bounded-pool');
const { MessageParseError } = require('./errors');

let pool = null;

/*
 * Fair share of the render threads per owner (issue 29.7: one render thread shared by all
 * users in arrival order, so 12 heavy renders of one user made another's message view wait
 * 16 s). At most as many jobs as the pool has threads are handed to it; the rest wait here,
 * one queue per owner (the user), served round-robin: another owner's job waits for at most
 * one job of each owner ahead of it, however many one owner sent.
 */
const waiting = new Map(); // owner -> [start()]
let running = 0;

function pump() {
  const p = requestPool();
  while (running < Math.max(1, p.size) && waiting.size) {
    // Map order is the rotation: take the first owner's oldest job, move the owner to the end.
    const [owner, jobs] = waiting.entries().next().value;
    waiting.delete(owner);
    const start = jobs.shift();
    if (jobs.length) waiting.set(owner, jobs);
    running++;
    start();
  }
}

/** Runs fn when the owner's turn comes; frees the turn when it settles. */
function inTurn(owner, fn) {
  return new Promise((resolve, reject) => {
    const start = () =>
      Promise.resolve()
        .then(fn)
        .then(resolve, reject)
        .finally(() => {
          running--;
          pump();
        });
    const key = owner == null ? '' : String(owner);
    const jobs = waiting.get(key);
    if (jobs) jobs.push(start);
    else waiting.set(key, [start]);
    pump();
  });
}

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

async function runBounded(kind, raw, opts, owner) {
  const p = requestPool();
  const [r] = await inTurn(owner, () => p.run([raw], { ...opts, kind, timeBudgetMs: p.timeMs }));
  if (r.ok) return r.value;
  throw new MessageParseError(r.reason, r.detail);
}

/**
 * The message view (headers, text, sanitised HTML, attachment list), built in a worker
 * thread within the parse budget (MAILGATE_PARSE_TIME_MS, MAILGATE_PARSE_MEMORY_MB).
 *
 * @param {Buffer} raw
 * @param {{images?: 'blocked'|'remote', attachmentUrl?: string, owner?: string}} [opts] see
 *   buildView; owner: whose render this is (the user): owners share the threads round-robin
 * @returns {Promise<import('./display').MessageView>}
 * @throws {MessageParseError} 'too-complex' over the budget, or the input is not a message
 */
function renderMessage(raw, opts = {}) {
  return runBounded(
    'view',
    raw,
    { images: opts.images, attachmentUrl: opts.attachmentUrl },
    opts.owner,
  );
}

/**
 * parseMessage within the request-time budget, in a worker thread: what an IMAP FETCH of
 * BODYSTRUCTURE / ENVELOPE builds on (part numbers, types, sizes, addresses).
 *
 * @param {Buffer} raw
 * @param {{owner?: string}} [opts] owner: as for renderMessage
 * @returns {Promise<import('./parse').ParsedMessage>}
 * @throws {MessageParseError}
 */
function parseMessageBounded(raw, opts = {}) {
  return runBounded('parse', raw, {}, opts.owner);
}

/** Stops the request pool's threads (tests, shutdown); the next call starts new ones. */
async function closeRequestPool() {
  const p = pool;
  pool = null;
  if (p) await p.close();
}

module.exports = { renderMessage, parseMessageBounded, closeRequestPool, requestLimits };
