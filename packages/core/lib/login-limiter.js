'use strict';

/*
 * The one failed-login limiter, shared by every door that checks a password (HTTP
 * `POST /session`, IMAP LOGIN/AUTHENTICATE). It owns the counting only: callers verify the
 * password themselves and report the outcome. In-process state (one Node process serves
 * HTTP and IMAP), bounded in memory.
 *
 * Why this shape (issues 15 and 17):
 * - Check and count are one synchronous step (`attempt`): an attempt is counted before the
 *   password is verified, so 50 parallel guesses cannot all pass the check while the first
 *   verification is still running. The reservation is refunded only on success.
 * - Strict per user + address (default 10 per 15 min), loose per address alone (default 100
 *   per 15 min): one user's typos behind a shared address (office NAT, a webmail backend)
 *   never lock out another user from that address, yet one address cannot sweep many users.
 * - Per account, across addresses: after `accountFree` failures in the window each further
 *   attempt for that account waits its turn (exponential spacing, capped), so a guesser
 *   spread over many addresses is slowed down without locking the real user out.
 * - A success resets the user's counters (user + address, and the account's slow-down).
 */

const MIN = 60 * 1000;

const DEFAULTS = Object.freeze({
  userAddressMax: 10,
  addressMax: 100,
  windowMs: 15 * MIN,
  accountFree: 10,
  accountBaseMs: 250,
  accountMaxDelayMs: 8000,
  maxWaitMs: 15000,
  maxKeys: 50000,
});

/**
 * A fixed-window counter per key with a bounded number of keys (the oldest window is dropped
 * first: Map keeps insertion order).
 */
class WindowCounter {
  constructor(windowMs, maxKeys, now) {
    this.windowMs = windowMs;
    this.maxKeys = maxKeys;
    this.now = now;
    this.map = new Map();
  }

  /** @returns {{count: number, resetAt: number}} the live entry for key (created empty) */
  entry(key) {
    const t = this.now();
    let e = this.map.get(key);
    if (!e || t >= e.resetAt) {
      this.map.delete(key);
      e = { count: 0, resetAt: t + this.windowMs, nextSlot: 0 };
      this.map.set(key, e);
      if (this.map.size > this.maxKeys) this.map.delete(this.map.keys().next().value);
    }
    return e;
  }

  peek(key) {
    const e = this.map.get(key);
    return e && this.now() < e.resetAt ? e : null;
  }

  delete(key) {
    this.map.delete(key);
  }
}

/**
 * Failed-login limiter. Usage, in any protocol:
 * ```js
 * const { LoginLimiter } = require('@mailgate/core');
 * const limiter = new LoginLimiter();           // one per process, shared by HTTP and IMAP
 * const a = limiter.attempt(user, address);
 * if (!a.allowed) return refuse(a.retryAfter);  // HTTP 429 + Retry-After; IMAP NO [UNAVAILABLE]
 * if (a.delayMs) await sleep(a.delayMs);        // per-account slow-down
 * try { ok = await verify(); } catch (e) { a.cancel(); throw e; }  // not an answer: refund
 * ok ? a.succeeded() : a.failed();
 * ```
 */
class LoginLimiter {
  /**
   * @param {object} [opts]
   * @param {number} [opts.userAddressMax] failures per user + address per window (strict)
   * @param {number} [opts.addressMax] failures per address per window, any user (loose)
   * @param {number} [opts.windowMs] window length (default 15 minutes)
   * @param {number} [opts.accountFree] failures per account per window before the slow-down
   * @param {number} [opts.accountBaseMs] first spacing of the slow-down, doubled per failure
   * @param {number} [opts.accountMaxDelayMs] largest spacing
   * @param {number} [opts.maxWaitMs] an attempt that would wait longer is refused instead
   * @param {number} [opts.maxKeys] keys kept per counter (memory bound)
   * @param {() => number} [opts.now] clock (tests)
   */
  constructor(opts = {}) {
    const o = { ...DEFAULTS };
    for (const [k, v] of Object.entries(opts)) if (v != null) o[k] = v;
    this.opts = o;
    this.now = o.now || Date.now;
    this.userAddress = new WindowCounter(o.windowMs, o.maxKeys, this.now);
    this.address = new WindowCounter(o.windowMs, o.maxKeys, this.now);
    this.account = new WindowCounter(o.windowMs, o.maxKeys, this.now);
  }

  /**
   * Checks and counts one login attempt in a single step.
   * @param {string} user the user name as typed (unknown users are counted the same way)
   * @param {string} address the client's address (IP)
   * @returns {{allowed: false, retryAfter: number} | {allowed: true, delayMs: number,
   *   succeeded: () => void, failed: () => void, cancel: () => void}}
   */
  attempt(user, address) {
    const o = this.opts;
    const t = this.now();
    const uaKey = `${address}\u0000${String(user).toLowerCase()}`;
    const acKey = String(user).toLowerCase();
    const ua = this.userAddress.entry(uaKey);
    const ad = this.address.entry(address);
    const ac = this.account.entry(acKey);
    const refuse = (e) => ({
      allowed: false,
      retryAfter: Math.max(1, Math.ceil((e.resetAt - t) / 1000)),
    });
    if (ua.count >= o.userAddressMax) return refuse(ua);
    if (ad.count >= o.addressMax) return refuse(ad);
    let delayMs = 0;
    if (ac.count >= o.accountFree) {
      const spacing = Math.min(
        o.accountBaseMs * 2 ** (ac.count - o.accountFree),
        o.accountMaxDelayMs,
      );
      const slot = Math.max(t, ac.nextSlot);
      if (slot - t > o.maxWaitMs)
        return { allowed: false, retryAfter: Math.ceil((slot - t) / 1000) };
      ac.nextSlot = slot + spacing;
      delayMs = slot - t;
    }
    ua.count++;
    ad.count++;
    ac.count++;
    let settled = false;
    const settle = (fn) => () => {
      if (settled) return;
      settled = true;
      fn();
    };
    const refund = () => {
      for (const [counter, key] of [
        [this.userAddress, uaKey],
        [this.address, address],
        [this.account, acKey],
      ]) {
        const e = counter.peek(key);
        if (e && e.count > 0) e.count--;
      }
    };
    return {
      allowed: true,
      delayMs,
      failed: settle(() => {}),
      cancel: settle(refund),
      succeeded: settle(() => {
        refund();
        this.userAddress.delete(uaKey);
        this.account.delete(acKey);
      }),
    };
  }
}

module.exports = { LoginLimiter, LOGIN_LIMIT_DEFAULTS: DEFAULTS };
