'use strict';

const { errors } = require('@mailgate/core');
const { toAst } = require('./paging');
const { OPERATIONS } = require('./backend');

/*
 * Fair share of the database pool per user (issue 29 item 4): ten heavy requests of one user
 * (10,000-uid COPYs, 200-term text searches over HTTP, 1,000-key IMAP SEARCHes) held all ten
 * pooled connections for the 15 s statement timeout and every other user got 503. The gate
 * sits in the service, where HTTP routes and IMAP commands meet, so both doors share one
 * count per user: at most `perUser` operations of a user run at once (each holds at most one
 * pooled connection at a time); the next ones wait their turn in the user's own queue, never
 * in front of another user. A user whose queue is full, or whose operation waited
 * `waitMs`, gets USER_BUSY (HTTP 429, IMAP NO [LIMIT]). The gate owns this counting only;
 * it never looks inside an operation. Streams (NDJSON scans) are bounded by the API's own
 * stream gate and are not counted here.
 *
 * Also the query-cost limits every backend shares (checkQueryCost, checkUids): a search may
 * name at most `maxSubstringTerms` substring terms (each one a trigram scan of the user's
 * mail), and one operation at most `maxUids` uids.
 */

const DEFAULTS = Object.freeze({
  perUser: 4,
  queue: 64,
  waitMs: 20000,
  maxSubstringTerms: 32,
  maxUids: 100000,
});

/*
 * Operations that return a promise and may hold a pooled connection: counted per user. Derived
 * from the one list of the interface (backend.js OPERATIONS), so that an operation added there
 * is counted here without a second list to keep in step. Left out: the streams (scanStream,
 * scanRaw: bounded by the API's stream gate, see above) and claimRecent (one row update a
 * SELECT makes, never a heavy request), and append: the store's group commit (append-ops.js)
 * runs a user's appends into one mailbox as one transaction at a time, so waiting appends hold
 * no connection, and counting them here only kept them from joining the batch in flight (ten
 * LMTP sessions delivering to one user). Added: scanList, the list view MailBackend derives.
 */
const NOT_GATED = new Set(['scanStream', 'scanRaw', 'claimRecent', 'append']);
const GATED = Object.freeze([...OPERATIONS.filter((op) => !NOT_GATED.has(op)), 'scanList']);

/** Operations whose second argument may be a list of uids (checked against maxUids). */
const UID_ARGS = new Set([
  'getRawMany',
  'getRawWithStatus',
  'setFlags',
  'expunge',
  'restoreExpunged',
  'copy',
  'move',
]);

class UserGate {
  /**
   * @param {{perUser?: number, queue?: number, waitMs?: number, maxSubstringTerms?: number,
   *   maxUids?: number}} [opts]
   */
  constructor(opts = {}) {
    this.opts = { ...DEFAULTS };
    for (const [k, v] of Object.entries(opts || {})) if (v != null) this.opts[k] = v;
    /** @type {Map<string, {running: number, waiting: Array<() => void>}>} */
    this.users = new Map();
  }

  /**
   * Runs fn in one of the user's slots, after the user's earlier operations if all slots are
   * taken.
   * @template T
   * @param {string} user
   * @param {() => Promise<T>} fn
   * @returns {Promise<T>} USER_BUSY when the user's queue is full or the wait too long
   */
  async run(user, fn) {
    const release = await this.acquire(user);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  /**
   * @param {string} user
   * @returns {Promise<() => void>} release (idempotent)
   */
  async acquire(user) {
    const { perUser, queue, waitMs } = this.opts;
    let u = this.users.get(user);
    if (!u) {
      u = { running: 0, waiting: [] };
      this.users.set(user, u);
    }
    if (u.running >= perUser) {
      if (u.waiting.length >= queue) throw busy(perUser);
      await new Promise((resolve, reject) => {
        const turn = () => {
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          const i = u.waiting.indexOf(turn);
          if (i >= 0) u.waiting.splice(i, 1);
          reject(busy(perUser));
        }, waitMs);
        timer.unref?.();
        u.waiting.push(turn);
      });
      // The slot was handed over by the release that woke us (running stays counted).
    } else {
      u.running++;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = u.waiting.shift();
      if (next) return next();
      u.running--;
      if (u.running === 0 && this.users.get(user) === u) this.users.delete(user);
    };
  }

  /**
   * How many operations of a user run and wait (health, tests).
   * @param {string} user
   */
  load(user) {
    const u = this.users.get(user);
    return { running: u ? u.running : 0, waiting: u ? u.waiting.length : 0 };
  }

  /** Users with work in flight and operations waiting over all users (health). */
  summary() {
    let queued = 0;
    for (const u of this.users.values()) queued += u.waiting.length;
    return { perUser: this.opts.perUser, active: this.users.size, queued };
  }

  /**
   * Wraps a backend so that its operations go through the user's slots and the cost limits.
   * Calls a backend makes on itself (getMessage → fetchMessage) stay inside the one slot.
   * @template {object} B
   * @param {B} backend
   * @param {string} user
   * @returns {B}
   */
  guard(backend, user) {
    const gate = this;
    const wrapped = new Map();
    return new Proxy(backend, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver);
        if (typeof prop !== 'string' || typeof v !== 'function' || !GATED.includes(prop)) {
          return typeof v === 'function' ? v.bind(target) : v;
        }
        if (!wrapped.has(prop)) {
          wrapped.set(prop, async (...args) => {
            if (UID_ARGS.has(prop)) gate.checkUids(args[1]);
            if (prop === 'search') gate.checkQueryCost(args[0]);
            if (prop === 'setFlags' && !Array.isArray(args[1])) gate.checkQueryCost(args[1]);
            return gate.run(user, () => v.apply(target, args));
          });
        }
        return wrapped.get(prop);
      },
    });
  }

  /**
   * QUERY_TOO_COMPLEX when a uid list is longer than maxUids.
   * @param {unknown} uids
   */
  checkUids(uids) {
    if (Array.isArray(uids) && uids.length > this.opts.maxUids) {
      throw new errors.QUERY_TOO_COMPLEX(
        `${uids.length} messages in one operation; at most ${this.opts.maxUids}`,
      );
    }
  }

  /**
   * QUERY_TOO_COMPLEX when a query (text or AST) names more substring terms than
   * maxSubstringTerms. A query that does not parse is left to the backend's INVALID_QUERY.
   * @param {unknown} query
   */
  checkQueryCost(query) {
    if (query == null || query === '') return;
    let ast = query;
    if (typeof query === 'string') {
      try {
        ast = toAst(query);
      } catch {
        return;
      }
    }
    const n = countSubstringTerms(ast);
    if (n > this.opts.maxSubstringTerms) {
      throw new errors.QUERY_TOO_COMPLEX(
        `${n} substring terms (from:, to:, cc:, subject:, body:, text:); at most ${this.opts.maxSubstringTerms}`,
      );
    }
  }
}

/**
 * Substring terms of a query AST (iterative: the AST may be deep).
 * @param {object} ast
 * @returns {number}
 */
function countSubstringTerms(ast) {
  let n = 0;
  const stack = [ast];
  while (stack.length) {
    const node = stack.pop();
    if (!node || typeof node !== 'object') continue;
    if (node.type === 'substring') n++;
    if (Array.isArray(node.children)) stack.push(...node.children);
    if (node.child) stack.push(node.child);
  }
  return n;
}

function busy(perUser) {
  const err = new errors.USER_BUSY(perUser);
  err.retryAfter = 1;
  return err;
}

module.exports = { UserGate, USER_GATE_DEFAULTS: DEFAULTS, countSubstringTerms };
