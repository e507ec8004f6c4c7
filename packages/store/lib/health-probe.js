'use strict';

/*
 * The health check's own PostgreSQL connection, outside the pool (issue 17): when user work
 * holds every pooled connection (long scans, a burst of searches), `/health` must still
 * answer at once and tell the truth about the database. One raw connection made by knex's
 * client (same settings as the pool), kept open between checks, replaced after any error:
 * a restarted or failed-over server answers the next check on a fresh connection.
 */

// A check that takes longer than this reports the database as down rather than hanging a
// load balancer's probe.
const PROBE_TIMEOUT_MS = 2000;

class HealthProbe {
  /** @param {import('knex').Knex} knex */
  constructor(knex) {
    this.client = knex.client;
    this.conn = null;
    this.connecting = null;
    this.closed = false;
  }

  async connection() {
    if (this.conn) return this.conn;
    if (!this.connecting) {
      this.connecting = withTimeout(this.client.acquireRawConnection(), 'connect')
        .then((conn) => {
          // A server that goes away emits 'error' on an idle connection: forget it (the next
          // check reconnects) instead of letting the event crash the process.
          conn.on('error', () => this.drop(conn));
          conn.on('end', () => this.drop(conn));
          if (this.closed) {
            this.drop(conn);
            throw Object.assign(new Error('Client was closed'), { code: '08003' });
          }
          this.conn = conn;
          return conn;
        })
        .finally(() => {
          this.connecting = null;
        });
    }
    return this.connecting;
  }

  drop(conn) {
    if (this.conn === conn) this.conn = null;
    this.client.destroyRawConnection(conn).catch(() => {});
  }

  /** One `SELECT 1`; on a broken kept connection, once more on a fresh one. */
  async ping() {
    for (let attempt = 0; ; attempt++) {
      const reused = Boolean(this.conn);
      const conn = await this.connection();
      try {
        await withTimeout(conn.query('SELECT 1'), 'query');
        return;
      } catch (err) {
        this.drop(conn);
        if (!reused || attempt > 0) throw err;
      }
    }
  }

  async close() {
    this.closed = true;
    if (this.conn) this.drop(this.conn);
  }
}

function withTimeout(promise, what) {
  let timer;
  const timeout = new Promise((resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`timeout exceeded when trying to ${what} (health check)`)),
      PROBE_TIMEOUT_MS,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

module.exports = { HealthProbe, PROBE_TIMEOUT_MS };
