'use strict';

const { errors } = require('@mailgate/core');

/*
 * Long streams (the whole-mailbox NDJSON scan) each hold a database connection for as long
 * as the client reads. Issue 17: ten stalled readers of one user took the whole pool and
 * every other request, /health included, waited 5 s for a 503. Three guards:
 * - a cap per user and a cap for the server (below the pool size), so streams never take
 *   the connections other requests need: over the user's cap 429 TOO_MANY_STREAMS, over
 *   the server's 503 SERVER_BUSY, both with Retry-After;
 * - a write-backpressure timeout: a client that does not read for `stallMs` (the socket
 *   stays full and never drains) is disconnected, which ends the backend stream and frees its
 *   connection. Progress is a 'drain' of the response, not a sample of `writableNeedDrain`:
 *   a slow client that keeps reading has a full buffer at nearly every sample, and was cut
 *   after 10-15 s (issue 29.8);
 * - a client that goes away ends the backend stream at once (the backend cancels its COPY).
 */

const DEFAULTS = Object.freeze({ perUser: 2, total: 4, stallMs: 10000 });

class StreamGate {
  /**
   * @param {{perUser?: number, total?: number, stallMs?: number}} [opts]
   */
  constructor(opts = {}) {
    this.opts = { ...DEFAULTS };
    for (const [k, v] of Object.entries(opts || {})) if (v != null) this.opts[k] = v;
    this.byUser = new Map();
    this.open = 0;
  }

  /**
   * Takes a stream slot for user (one synchronous step, so parallel requests cannot all
   * pass the check).
   * @param {string} user
   * @returns {() => void} release, idempotent
   * @throws TOO_MANY_STREAMS (429) or SERVER_BUSY (503)
   */
  acquire(user) {
    const mine = this.byUser.get(user) || 0;
    if (mine >= this.opts.perUser) {
      const err = new errors.TOO_MANY_STREAMS(this.opts.perUser);
      err.retryAfter = Math.ceil(this.opts.stallMs / 1000);
      throw err;
    }
    if (this.open >= this.opts.total) throw new errors.SERVER_BUSY();
    this.byUser.set(user, mine + 1);
    this.open++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.open--;
      const n = this.byUser.get(user) - 1;
      if (n > 0) this.byUser.set(user, n);
      else this.byUser.delete(user);
    };
  }

  /**
   * Watches a streamed response: releases the slot when the response ends or closes, and
   * destroys it (and so the body and the backend stream under it) once the client has not
   * drained the socket for stallMs.
   * @param {import('node:http').ServerResponse} res
   * @param {() => void} release
   */
  watch(res, release) {
    const { stallMs } = this.opts;
    let since = null;
    // Every drain is the client having read what was queued: the stall clock starts again.
    const progressed = () => {
      since = null;
    };
    res.on('drain', progressed);
    const timer = setInterval(
      () => {
        if (!res.writableNeedDrain) {
          since = null;
          return;
        }
        since ??= Date.now();
        if (Date.now() - since >= stallMs) res.destroy();
      },
      Math.max(50, Math.min(1000, stallMs / 4)),
    );
    timer.unref();
    res.once('close', () => {
      clearInterval(timer);
      res.off('drain', progressed);
      release();
    });
  }
}

module.exports = { StreamGate, STREAM_DEFAULTS: DEFAULTS };
