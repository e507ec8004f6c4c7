'use strict';

/*
 * The append's own connections (issue 32: CPU per delivery): the transaction of a new message
 * (append-ops.js) sent as named statements, pipelined, on plain node-postgres clients, with no
 * query builder and no knex transaction wrapper. Owns a small pool of pipeline-mode clients and
 * the statements sent on them; holds no SQL of its own (append-ops.js passes its statements)
 * and never runs anything but an append's transaction.
 *
 * Why: on a warm `serve` a corpus delivery cost ~4-5 ms of Node CPU, of which the mail work was
 * ~0.55 ms (bench/results/deliver-2026-11-28-cpu-split). A V8 profile put 44% of it in the
 * socket writes of the PostgreSQL round trips and 20-40% in knex's transaction and query
 * pipeline: BEGIN, the allocating statement, the thread lookups, the insert and COMMIT were five
 * round trips, each one write, one wake-up of the backend and one of this process, and each went
 * through knex's runner (210-350 µs of Node CPU per knex transaction). Here a transaction is
 * two writes when its thread lookup is one step: BEGIN with the allocating statement and the
 * first thread lookup, then the insert with COMMIT (each group one socket write: pipelined, the
 * server runs them in order), and every statement is parsed once per connection (a name per
 * text). A 250 is still sent only after COMMIT's answer: the caller awaits it.
 *
 * plan_cache_mode = force_custom_plan on these sessions: a named statement's generic plan over
 * the partitioned tables would hold (and in PostgreSQL 17 lock) every user's partition
 * (prepared-reads.js); custom plans keep pruning to the user's own, and the named statement
 * still saves parsing and analysis. Not on Citus (citus.js point 10): there appends keep the
 * knex transaction.
 */

const crypto = require('node:crypto');
const { sidePool, withClient } = require('./side-pool');

// Named statements one connection keeps before it is replaced: the insert's text depends on
// how many messages a group commit holds and which parts it has, so the set is small but open.
const MAX_STATEMENTS = 256;
// Connections: one transaction per mailbox at a time (group commit), so few are ever busy.
const POOL_MAX = 4;
const CUSTOM = '-c plan_cache_mode=force_custom_plan';

// knex's `?` placeholders as `$n` (knex's own rule: a backslash-escaped `?` stays a `?`), and
// the statement's name, per text: the append's texts repeat, so each is converted once.
const texts = new Map();
function statementOf(sql) {
  let s = texts.get(sql);
  if (!s) {
    let n = 0;
    const text = sql.replace(/(\\*)(\?)/g, (m, escapes) => (escapes.length % 2 ? '?' : `$${++n}`));
    const name = `mg_append_${crypto.createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    s = { text, name };
    if (texts.size >= 4 * MAX_STATEMENTS) texts.clear();
    texts.set(sql, s);
  }
  return s;
}

/**
 * One append transaction on one pipeline-mode client. `send` writes a statement at once
 * without waiting for the ones before it (the server runs them in order); `raw` is knex's
 * `raw(sql, bindings)` shape for the steps shared with the knex path (thread-ops.js).
 */
class PipelinedTransaction {
  /**
   * @param {import('pg').PoolClient} client
   * @param {import('knex').Knex} knex whose 'query' event reports each statement (the
   *   statement counts of tests: test-support statementsDuring)
   */
  constructor(client, knex) {
    this.conn = client;
    this.knex = knex;
    /** The first error PostgreSQL answered (the connection is then not given back). */
    this.failed = null;
    /** BEGIN is to be sent before the next statement; open: sent, not ended yet. */
    this.beginPending = true;
    this.open = false;
  }

  /**
   * Sends one statement now; resolves with its result ({rows}) when it is answered.
   * @param {string} sql knex-style `?` placeholders
   * @param {any[]} [bindings]
   * @returns {Promise<{rows: object[], command: string}>}
   */
  send(sql, bindings) {
    if (this.beginPending) {
      // BEGIN leaves with the transaction's first statement (the same write when grouped).
      this.beginPending = false;
      this.open = true;
      this.send('BEGIN');
    }
    this.knex.emit('query', { method: 'raw', sql, bindings: bindings || [] });
    let p;
    if (!bindings || !bindings.length) {
      p = this.conn.query(sql);
    } else {
      const { text, name } = statementOf(sql);
      if (!this.conn.mgNames) this.conn.mgNames = new Set();
      this.conn.mgNames.add(name);
      p = this.conn.query({ name, text, values: bindings });
    }
    p.catch((err) => {
      this.failed ??= err;
    });
    return p;
  }

  /**
   * Runs `fn`, whose statements (send) leave in one socket write: node-postgres writes each
   * message of a statement on its own (corked per statement), so a group would be several
   * writes, each waking the server.
   * @template T
   * @param {() => T} fn
   * @returns {T}
   */
  together(fn) {
    const stream = this.conn.connection && this.conn.connection.stream;
    if (stream && stream.cork) stream.cork();
    try {
      return fn();
    } finally {
      if (stream && stream.uncork) stream.uncork();
    }
  }

  /**
   * knex's client, so that code shared with the knex path finds what it caches per database
   * (citus.js isCitus) without a statement of its own.
   */
  get client() {
    return this.knex.client;
  }

  /**
   * Sends a read now, in the current group, whose answer the next raw() of the same statement
   * and values takes (the append's first thread lookup, sent with the allocating statement).
   * Unasked, it is a read wasted, never a wrong answer.
   */
  prefetch(sql, bindings) {
    this.ahead = { sql, bindings, p: this.send(sql, bindings) };
  }

  /** knex's raw(sql, bindings): one statement (or the prefetched answer to it). */
  raw(sql, bindings) {
    const a = this.ahead;
    if (a && a.sql === sql && sameValues(a.bindings, bindings)) {
      this.ahead = null;
      return a.p;
    }
    return this.send(sql, bindings);
  }
}

/** Whether two lists of bound values are equal (numbers, strings, Buffers, arrays of them). */
function sameValues(a, b) {
  if (a === b) return true;
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => sameValues(x, b[i]));
  }
  return false;
}

class AppendWriter {
  /** @param {import('knex').Knex} knex the store's knex: its settings and its query events */
  constructor(knex) {
    this.knex = knex;
    this.pool = null;
    this.closed = false;
  }

  /** The pool of pipeline-mode clients, opened at the first append (side-pool.js). */
  open() {
    if (!this.pool) {
      this.pool = sidePool(this.knex, { options: CUSTOM, max: POOL_MAX, pipeline: true });
    }
    return this.pool;
  }

  /**
   * Runs one transaction: BEGIN is sent with the first statement `fn` sends, and `fn` ends it
   * with commitWith (its last statement and COMMIT in one write). Anything `fn` throws rolls it
   * back; a connection that had an error from PostgreSQL is closed, not given back (its named
   * statements may be half made), which also ends its transaction.
   * @template T
   * @param {(tx: PipelinedTransaction) => Promise<T>} fn
   * @returns {Promise<T>}
   */
  async transaction(fn) {
    if (this.closed) throw new Error('append writer closed');
    let tx = null;
    let drop = false;
    return withClient(
      this.open(),
      async (client) => {
        tx = new PipelinedTransaction(client, this.knex);
        try {
          const out = await fn(tx);
          if (tx.open) throw new Error('append transaction not committed');
          return out;
        } catch (err) {
          if (tx.failed) {
            // PostgreSQL answered an error: closing the connection ends its transaction.
            drop = true;
          } else if (tx.open) {
            // Not PostgreSQL's fault (no such mailbox, a refused route): the connection is fine.
            try {
              await tx.send('ROLLBACK');
            } catch {
              drop = true;
            }
          }
          throw err;
        }
      },
      {
        // A backend ended between two statements (restart, failover, pg_terminate_backend) is
        // the transaction's failure: its next statement rejects (withClient keeps the
        // process alive and closes the connection).
        onLost: (err) => {
          if (tx) tx.failed ??= err;
        },
        drop: (client) => drop || client.mgNames?.size >= MAX_STATEMENTS,
      },
    );
  }

  /** Closes the pool (service close). */
  async close() {
    this.closed = true;
    const p = this.pool;
    this.pool = null;
    if (p) await p.end();
  }
}

/**
 * Sends the transaction's last statement and COMMIT in one write; resolves with the
 * statement's result once COMMIT is answered. A failed statement makes COMMIT a rollback
 * (PostgreSQL answers ROLLBACK): its error is thrown.
 * @param {PipelinedTransaction} tx
 * @param {string} sql
 * @param {any[]} bindings
 */
async function commitWith(tx, sql, bindings) {
  let last;
  let commit;
  tx.together(() => {
    last = tx.send(sql, bindings);
    commit = tx.send('COMMIT');
  });
  // Both awaited (a rejection of either is handled); the transaction is over either way.
  const [a, b] = await Promise.allSettled([last, commit]);
  tx.open = false;
  if (a.status === 'rejected') throw a.reason;
  if (b.status === 'rejected') throw b.reason;
  if (b.value.command !== 'COMMIT') throw new Error(`append not committed (${b.value.command})`);
  return a.value;
}

/** The store's AppendWriter (made at first use). */
function writerOf(store) {
  if (!store.appendWriter) store.appendWriter = new AppendWriter(store.knex);
  return store.appendWriter;
}

/**
 * Closes the append's connections (before the main pool is destroyed).
 * @param {import('./pg-store').PgStore} store
 */
async function closeAppendWriter(store) {
  if (store.appendWriter) await store.appendWriter.close();
  store.appendWriter = null;
}

module.exports = {
  AppendWriter,
  PipelinedTransaction,
  writerOf,
  commitWith,
  closeAppendWriter,
  statementOf,
  MAX_STATEMENTS,
};
