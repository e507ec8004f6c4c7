'use strict';

const { errors } = require('@mailgate/core');

/*
 * The health check's own PostgreSQL connection, outside the pool (issue 17): when user work
 * holds every pooled connection (long scans, a burst of searches), `/health` must still
 * answer at once and tell the truth about the database. One raw connection made by knex's
 * client (same settings as the pool), kept open between checks, replaced after any error:
 * a restarted or failed-over server answers the next check on a fresh connection.
 *
 * At most one connection attempt is in flight, whatever the probe rate: an attempt that
 * outlives a check's timeout is kept (not started again), and its connection, when it
 * finally comes, is used by the next check or closed if the probe was closed meanwhile.
 * A load balancer probing every second during an outage therefore never piles up
 * connections that all land when the database comes back.
 *
 * One statement at a time on the kept connection (`exclusive`): callers share it (every
 * /health request; the IMAP servers of one process ask for credential stamps on their own
 * timers), and node-postgres only queues a statement sent while another runs, a use it
 * deprecates (pg@9 refuses it). A caller waits for its turn at most the timeout; a statement
 * that times out gives its turn up at once and its connection is dropped, so the next caller
 * never writes behind a hung statement.
 */

// A check that takes longer than this reports the database as down rather than hanging a
// load balancer's probe.
const PROBE_TIMEOUT_MS = 2000;

class HealthProbe {
  /**
   * @param {import('knex').Knex} knex
   * @param {{timeoutMs?: number}} [opts]
   */
  constructor(knex, opts = {}) {
    this.client = knex.client;
    this.timeoutMs = opts.timeoutMs || PROBE_TIMEOUT_MS;
    this.conn = null;
    this.connecting = null;
    this.closed = false;
    // Settles when the last caller that asked for a turn is done (exclusive).
    this.turn = Promise.resolve();
    this.holders = 0;
  }

  /** The kept connection, or the one attempt in flight (started if none). */
  connection() {
    if (this.conn) return Promise.resolve(this.conn);
    if (!this.connecting) {
      this.connecting = this.client
        .acquireRawConnection()
        .then((conn) => {
          // A server that goes away emits 'error' on an idle connection: forget it (the next
          // check reconnects) instead of letting the event crash the process.
          conn.on('error', () => this.drop(conn));
          conn.on('end', () => this.drop(conn));
          if (this.closed) {
            this.drop(conn);
            throw down('probe closed');
          }
          this.conn = conn;
          return conn;
        })
        .finally(() => {
          this.connecting = null;
        });
      // Settles later than a timed-out check: nobody may be listening any more.
      this.connecting.catch(() => {});
    }
    return this.connecting;
  }

  drop(conn) {
    if (this.conn === conn) this.conn = null;
    Promise.resolve(this.client.destroyRawConnection(conn)).catch(() => {});
  }

  /**
   * Runs `task` when every earlier caller's task is done: the kept connection carries one
   * statement at a time. Waiting longer than the timeout for the turn is DB_UNAVAILABLE
   * (the task is then not run).
   * @template T
   * @param {() => Promise<T>} task bounded itself (its statements are timed out)
   * @returns {Promise<T>}
   */
  async exclusive(task) {
    const before = this.turn;
    let done;
    const mine = new Promise((resolve) => (done = resolve));
    // Never rejects: the next caller waits for this one, and this one for the one before,
    // even when this one gives up waiting.
    this.turn = before.then(() => mine);
    const ahead = this.holders++;
    try {
      // Nobody ahead: the task starts now, in this tick (one connection attempt per check
      // burst, health-probe.test.js).
      if (ahead) {
        try {
          await withTimeout(before, this.timeoutMs);
        } catch {
          throw down('busy');
        }
      }
      return await task();
    } finally {
      this.holders--;
      done();
    }
  }

  /**
   * One statement on the probe's connection, in its turn (exclusive); a failed or timed-out
   * statement drops the connection (the next one connects afresh).
   * @param {string} sql with $1… placeholders
   * @param {unknown[]} [params]
   * @returns {Promise<{rows: object[]}>} DB_UNAVAILABLE with fixed text on any failure
   */
  query(sql, params = []) {
    return this.exclusive(() => this.statement(sql, params, false));
  }

  /**
   * One `SELECT 1`; on a broken kept connection, once more on a fresh one.
   * @throws DB_UNAVAILABLE (fixed text: /health is unauthenticated, no driver detail leaks)
   */
  async ping() {
    await this.exclusive(() => this.statement('SELECT 1', [], true));
  }

  async statement(sql, params, retry) {
    for (let attempt = 0; ; attempt++) {
      const reused = Boolean(this.conn);
      let conn;
      try {
        conn = await withTimeout(this.connection(), this.timeoutMs);
      } catch {
        throw down('cannot connect');
      }
      try {
        return await withTimeout(conn.query(sql, params), this.timeoutMs);
      } catch {
        // A timed-out query leaves the connection busy: replace it.
        this.drop(conn);
        if (!retry || !reused || attempt > 0) throw down('no answer');
      }
    }
  }

  async close() {
    this.closed = true;
    if (this.conn) this.drop(this.conn);
  }
}

function down(what) {
  return new errors.DB_UNAVAILABLE(`health check: ${what}`);
}

function withTimeout(promise, ms) {
  let timer;
  const timeout = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new Error('timeout')), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

module.exports = { HealthProbe, PROBE_TIMEOUT_MS };
