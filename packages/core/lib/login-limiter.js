'use strict';

/*
 * The one failed-login limiter, shared by every door that checks a password (HTTP
 * `POST /session`, IMAP LOGIN/AUTHENTICATE). It owns the counting only: callers verify the
 * password themselves and report the outcome. In-process state (one Node process serves
 * HTTP and IMAP), bounded in memory. It never refuses a login for what is merely in flight.
 *
 * Why this shape (issues 15, 17, 29 and 35):
 * - Check and reservation are one synchronous step: an attempt is reserved before the
 *   password is verified, so 50 parallel guesses cannot all pass the check while the first
 *   verification is still running. But only *settled failures* refuse: an attempt that finds
 *   the limit taken by attempts still being verified waits for them to settle and checks
 *   again (issue 35: 20 simultaneous correct logins of one user from one address — a mail
 *   client opening several connections — all get in; 50 parallel guesses still get 10
 *   verifications and 40 refusals).
 * - Strict per user + address (default 10 per 15 min), loose per address alone (default 100
 *   per 15 min): one user's typos behind a shared address (office NAT, a webmail backend)
 *   never lock out another user from that address, yet one address cannot sweep many users.
 * - Per account, across addresses: after `accountFree` failures in the window each further
 *   attempt for that account from an address that has failed before waits its turn
 *   (exponential spacing, capped). An address without failures in the window is never
 *   slowed or refused by another address's guessing (issue 29 item 7: 28 guesses from three
 *   addresses kept the real user at 429 for 75 s). The price, stated: a guesser gets one
 *   unslowed guess per fresh address per window; each address is then bounded as above.
 * - User names are case-sensitive everywhere (the store's rule), and so are the limiter's
 *   keys: `ALICE` is another account and its success never resets `alice`'s counters.
 * - A success resets the user's counters (user + address, and the account's slow-down).
 * - Several processes on one database (issue 34.4): with `shared` (the service's
 *   `users.loginFailures`, a PostgreSQL table through the store) the settled failure counts
 *   are the database's: each check reads them, each failure is written before it is
 *   answered, a success clears them. A guesser taking turns between two `mailgate serve`
 *   processes meets one count. What stays per process, stated: attempts in flight (a burst
 *   sent to N processes at the same instant can get N verifications per free slot before the
 *   first failures settle) and the spacing of the account's slow lane. If the database does
 *   not answer, the count of this process still holds (`onSharedError` is told).
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
 * first: Map keeps insertion order). An entry counts settled failures (`count`) apart from
 * attempts still being verified (`pending`); `waiters` are woken when one of those settles.
 */
class WindowCounter {
  constructor(windowMs, maxKeys, now) {
    this.windowMs = windowMs;
    this.maxKeys = maxKeys;
    this.now = now;
    this.map = new Map();
  }

  /** @returns {{count: number, pending: number, resetAt: number, nextSlot: number, waiters: Function[], version: number}} the live entry for key (created empty); version: settlements so far */
  entry(key) {
    const t = this.now();
    let e = this.map.get(key);
    if (!e || t >= e.resetAt) {
      // Attempts in flight settle on the entry they reserved (and wake its waiters); the
      // new window starts empty.
      this.map.delete(key);
      e = {
        count: 0,
        pending: 0,
        resetAt: t + this.windowMs,
        nextSlot: 0,
        waiters: [],
        version: 0,
      };
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

/** Wakes every attempt waiting on entry e (they check again). */
function wake(e) {
  const w = e.waiters.splice(0);
  for (const fn of w) fn();
}

/**
 * Failed-login limiter. Usage, in any protocol:
 * ```js
 * const { LoginLimiter } = require('@mailgate/core');
 * const limiter = new LoginLimiter();           // one per process, shared by HTTP and IMAP
 * const a = await limiter.admit(user, address); // may wait for attempts in flight to settle
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
   * @param {{counts: (keys: string[], nowMs: number) => Promise<Map<string, {count: number,
   *   resetAt: number}>>, add: (keys: string[], nowMs: number, windowMs: number) =>
   *   Promise<void>, clear: (keys: string[]) => Promise<void>}} [opts.shared] settled counts
   *   shared by every process (the service's `users.loginFailures`); without it, this
   *   process's memory
   * @param {(err: Error) => void} [opts.onSharedError] told when `shared` fails (the
   *   process's own count is used meanwhile)
   */
  constructor(opts = {}) {
    const { shared, onSharedError, ...rest } = opts;
    const o = { ...DEFAULTS };
    for (const [k, v] of Object.entries(rest)) if (v != null) o[k] = v;
    this.opts = o;
    this.shared = shared || null;
    this.onSharedError = onSharedError || (() => {});
    this.now = o.now || Date.now;
    this.userAddress = new WindowCounter(o.windowMs, o.maxKeys, this.now);
    this.address = new WindowCounter(o.windowMs, o.maxKeys, this.now);
    this.account = new WindowCounter(o.windowMs, o.maxKeys, this.now);
  }

  /**
   * Checks and reserves one login attempt, waiting (at most `maxWaitMs`) while the limit is
   * taken only by attempts still being verified.
   * @param {string} user the user name as typed (unknown users are counted the same way)
   * @param {string} address the client's address (IP)
   * @returns {Promise<{allowed: false, retryAfter: number} | {allowed: true, delayMs: number,
   *   succeeded: () => void, failed: () => void, cancel: () => void}>}
   */
  async admit(user, address) {
    const deadline = this.now() + this.opts.maxWaitMs;
    for (;;) {
      if (this.shared) await this.loadShared(user, address);
      const a = this.attempt(user, address);
      if (!a.wait) return a;
      const left = deadline - this.now();
      if (left <= 0) return { allowed: false, retryAfter: 1 };
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, left);
        timer.unref?.();
        a.wait.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The three counters' keys of an attempt: user + address, address, account. */
  keysOf(user, address) {
    const name = String(user);
    return { ua: `${address}\u0000${name}`, ad: String(address), ac: name };
  }

  /** Shared keys: the three counters apart (an address and a user name may be equal). */
  sharedKeys(k) {
    return [`ua:${k.ua}`, `ad:${k.ad}`, `ac:${k.ac}`];
  }

  /**
   * Sets the settled counts of an attempt's entries to the shared ones. An entry that settled
   * an attempt of this process while the read ran keeps the larger count (the read may not
   * have seen that write yet).
   */
  async loadShared(user, address) {
    const k = this.keysOf(user, address);
    const entries = [
      this.userAddress.entry(k.ua),
      this.address.entry(k.ad),
      this.account.entry(k.ac),
    ];
    const before = entries.map((e) => e.version);
    const keys = this.sharedKeys(k);
    let counts;
    try {
      counts = await this.shared.counts(keys, this.now());
    } catch (err) {
      this.onSharedError(err);
      return;
    }
    entries.forEach((e, i) => {
      const c = counts.get(keys[i]);
      const n = c ? c.count : 0;
      e.count = e.version === before[i] ? n : Math.max(n, e.count);
      if (c) e.resetAt = c.resetAt;
    });
  }

  /**
   * Checks and reserves one login attempt in a single synchronous step.
   * @param {string} user
   * @param {string} address
   * @returns {{allowed: false, retryAfter: number, wait?: object} | {allowed: true,
   *   delayMs: number, succeeded: () => Promise<void>, failed: () => Promise<void>,
   *   cancel: () => Promise<void>}} the outcome's promise settles once a shared count is
   *   written (never rejects); `wait` (with allowed false): the limit is taken only by attempts in flight — `admit`
   *   waits for them instead of refusing
   */
  attempt(user, address) {
    const o = this.opts;
    const t = this.now();
    const k = this.keysOf(user, address);
    const ua = this.userAddress.entry(k.ua);
    const ad = this.address.entry(k.ad);
    const ac = this.account.entry(k.ac);
    const refuse = (e) => ({
      allowed: false,
      retryAfter: Math.max(1, Math.ceil((e.resetAt - t) / 1000)),
    });
    for (const [e, max] of [
      [ua, o.userAddressMax],
      [ad, o.addressMax],
    ]) {
      if (e.count >= max) return refuse(e);
      if (e.count + e.pending >= max) return { ...refuse(e), wait: e };
    }
    let delayMs = 0;
    // Only an address that has failed in this window joins the account's slow lane.
    if (ad.count > 0 && ac.count >= o.accountFree) {
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
    const entries = [ua, ad, ac];
    for (const e of entries) e.pending++;
    let settled = false;
    // write: the shared count's change, done before the attempt settles here, so the next
    // attempt of this process (and of any other, once answered) reads it.
    const settle = (fn, write) => async () => {
      if (settled) return;
      settled = true;
      if (this.shared && write) {
        try {
          await write(this.sharedKeys(k));
        } catch (err) {
          this.onSharedError(err);
        }
      }
      for (const e of entries) {
        if (e.pending > 0) e.pending--;
        e.version++;
      }
      fn();
      for (const e of entries) wake(e);
    };
    return {
      allowed: true,
      delayMs,
      failed: settle(
        () => {
          for (const e of entries) e.count++;
        },
        (keys) => this.shared.add(keys, t, o.windowMs),
      ),
      cancel: settle(() => {}),
      succeeded: settle(
        () => {
          // Reset the user's counters; attempts still in flight keep their reservation.
          ua.count = 0;
          ac.count = 0;
          ac.nextSlot = 0;
        },
        (keys) => this.shared.clear([keys[0], keys[2]]),
      ),
    };
  }
}

module.exports = { LoginLimiter, LOGIN_LIMIT_DEFAULTS: DEFAULTS };
