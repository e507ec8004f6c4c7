'use strict';

/**
 * Counts failed logins per key (client address + user name, and client address alone) in a
 * fixed window. Checked before the password is verified, so a blocked client cannot keep
 * guessing; a success clears the per-user key. Memory is bounded: at most `maxKeys` keys,
 * the oldest dropped first (Map keeps insertion order).
 */
class FailureLimiter {
  /**
   * @param {{max?: number, windowMs?: number, maxKeys?: number, now?: () => number}} [opts]
   */
  constructor(opts = {}) {
    this.max = opts.max || 5;
    this.windowMs = opts.windowMs || 15 * 60 * 1000;
    this.maxKeys = opts.maxKeys || 10000;
    this.now = opts.now || Date.now;
    this.entries = new Map();
  }

  /** @returns {number} seconds until the key may try again, 0 when allowed */
  blockedFor(key) {
    const e = this.entries.get(key);
    if (!e) return 0;
    const t = this.now();
    if (t >= e.resetAt) {
      this.entries.delete(key);
      return 0;
    }
    return e.count >= this.max ? Math.ceil((e.resetAt - t) / 1000) : 0;
  }

  fail(key) {
    const t = this.now();
    let e = this.entries.get(key);
    if (!e || t >= e.resetAt) {
      this.entries.delete(key);
      e = { count: 0, resetAt: t + this.windowMs };
      this.entries.set(key, e);
      if (this.entries.size > this.maxKeys) {
        this.entries.delete(this.entries.keys().next().value);
      }
    }
    e.count++;
  }

  clear(key) {
    this.entries.delete(key);
  }
}

module.exports = { FailureLimiter };
