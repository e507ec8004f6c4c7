'use strict';

const Cursor = require('pg-cursor');
const { Query } = require('pg');

/*
 * Server-side cursors on the store's knex pool, safe against a connection lost mid-read:
 * the read rejects, the connection is discarded rather than returned busy, and the pool slot
 * is freed. Every streamed read of many rows (the NDJSON scan, the header-row iterator, the
 * export's sources) goes through cursorBatches, never knex's .stream() (whose destroy waits
 * for a ReadyForQuery a dead socket never sends).
 */

// Rows fetched per cursor read by default: the only rows held in memory at a time.
const CURSOR_BATCH = 256;

/**
 * A statement's rows, `batch` (default CURSOR_BATCH) at a time, from a server-side cursor (pg-cursor) on a
 * pooled connection held until the last batch or until the consumer stops (return()).
 * pg-cursor directly rather than pg-query-stream: its read() rejects when the connection is
 * lost, where QueryStream's destroy waited for a ReadyForQuery a dead socket never sends, so
 * the stream hung and its pool slot was lost for good (review finding 1); and it reads no
 * batch ahead, so one batch is all that is held.
 * The connection goes back to the pool only after PostgreSQL's ReadyForQuery (released
 * before it, the pool's next statement went to a connection still busy: the pg-serial
 * guard's catch); one lost, failed or in an unknown state is destroyed and discarded.
 * @param {import('knex').Knex} knex
 * @param {string} sql with $n placeholders
 * @param {any[]} params
 * @param {{batch?: number}} [opts] rows per read: the only rows held at a time
 * @returns {AsyncGenerator<object[]>}
 */
async function* cursorBatches(knex, sql, params, opts = {}) {
  const size = opts.batch || CURSOR_BATCH;
  const client = await knex.client.acquireConnection();
  const cursor = client.query(new Cursor(sql, params));
  let clean = false;
  try {
    for (;;) {
      const batch = await cursor.read(size);
      if (!batch.length) break;
      yield batch;
    }
    clean = true;
  } finally {
    // A failed cursor or a dead connection never sends ReadyForQuery: closing would wait
    // for good, so the connection is discarded without it.
    let usable = cursor.state !== 'error' && !connectionLost(client);
    if (usable) {
      try {
        await closeCursor(client, cursor);
        await readyFor(client);
      } catch {
        usable = false;
      }
    }
    if (!usable || (!clean && client.readyForQuery === false)) {
      client.__knex__disposed = client.__knex__disposed || 'cursor read aborted';
      if (client.connection && client.connection.stream) client.connection.stream.destroy();
    }
    await knex.client.releaseConnection(client);
  }
}

/**
 * Resolves once a node-postgres client has finished its statement (its 'drain' after
 * ReadyForQuery), or at once when it already has; rejects if the connection ends first.
 * @param {import('pg').Client} client
 * @returns {Promise<void>}
 */
function readyFor(client) {
  if (client.readyForQuery !== false) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const done = (err) => {
      client.off('drain', ok);
      client.off('error', done);
      client.off('end', ended);
      if (err) reject(err);
      else resolve();
    };
    const ok = () => done();
    const ended = () => done(new Error('connection ended during a cursor read'));
    client.once('drain', ok);
    client.once('error', done);
    client.once('end', ended);
  });
}

/**
 * Whether a node-postgres client's connection has ended or failed (knex marks it disposed).
 * @param {import('pg').Client} client
 * @returns {boolean}
 */
function connectionLost(client) {
  return Boolean(client._ended || client._queryable === false || client.__knex__disposed);
}

/**
 * Closes a cursor: resolves on PostgreSQL's ReadyForQuery, rejects if the connection ends
 * or fails first (cursor.close alone would wait for good on a dead socket).
 * @param {import('pg').Client} client
 * @param {import('pg-cursor')} cursor
 * @returns {Promise<void>}
 */
function closeCursor(client, cursor) {
  return new Promise((resolve, reject) => {
    const lost = () => done(new Error('connection lost while closing a cursor'));
    const done = (err) => {
      client.off('end', lost);
      client.off('error', lost);
      if (err) reject(err);
      else resolve();
    };
    client.once('end', lost);
    client.once('error', lost);
    cursor.close((err) => done(err));
  });
}

/**
 * A statement's rows handed to `onRow` one at a time as PostgreSQL sends them (no cursor: the
 * statement runs to its end without waiting for the consumer), on a pooled connection held
 * until PostgreSQL's ReadyForQuery. For reads of a few large rows whose consumer has work per
 * row (the IMAP list view's packed read, issue 35.3): it works on the first rows while
 * PostgreSQL still aggregates and sends the rest, where a plain statement hands over nothing
 * before the last row. `onRow` may be async: rows arriving meanwhile wait in order. When
 * `onRow` throws, the remaining rows are read and dropped (the statement cannot be stopped),
 * then the error is thrown; a failed statement or a lost connection rejects, and a connection
 * in an unknown state is discarded, not given back busy.
 * @param {import('knex').Knex} knex
 * @param {string} sql with $n placeholders
 * @param {any[]} params
 * @param {(row: object) => (void|Promise<void>)} onRow
 * @returns {Promise<number>} rows read
 */
async function rowsAsSent(knex, sql, params, onRow) {
  const client = await knex.client.acquireConnection();
  const queue = [];
  let ended = false;
  let failure = null;
  let wake = null;
  const poke = () => {
    const w = wake;
    wake = null;
    if (w) w();
  };
  // The connection goes back to the pool as soon as PostgreSQL has sent the last row, not
  // when the consumer has handled it: the consumer is an IMAP session writing to its client,
  // which may stop reading for as long as its socket allows. Holding the connection until
  // then let a few non-reading clients take the whole pool from every other user (review
  // finding F4, 2026-11-28); the rows are in memory either way.
  let released = null;
  const release = () => {
    if (!released) released = giveBack(knex, client, lost);
    return released;
  };
  const stop = (err) => {
    if (err && !failure) failure = err;
    ended = true;
    release();
    poke();
  };
  const lost = () => stop(new Error('connection lost during a read'));
  const q = new Query({ text: sql, values: params });
  q.on('row', (row) => {
    queue.push(row);
    poke();
  });
  q.on('end', () => stop(null));
  q.on('error', (err) => stop(err));
  client.once('end', lost);
  client.once('error', lost);
  let n = 0;
  let consumer = null;
  try {
    client.query(q);
    for (;;) {
      while (queue.length) {
        const row = queue.shift();
        n++;
        if (consumer || failure) continue; // read and dropped
        try {
          await onRow(row);
        } catch (err) {
          consumer = err;
        }
      }
      if (ended) break;
      await new Promise((resolve) => {
        wake = resolve;
      });
    }
  } finally {
    await release();
  }
  if (failure) throw failure;
  if (consumer) throw consumer;
  return n;
}

/**
 * Gives a read's connection back to the pool once its statement is over: usable when it
 * reached ReadyForQuery, else destroyed (knex then discards it).
 */
async function giveBack(knex, client, lost) {
  client.off('end', lost);
  client.off('error', lost);
  let usable = !connectionLost(client);
  if (usable) {
    try {
      await readyFor(client);
    } catch {
      usable = false;
    }
  }
  if (!usable) {
    client.__knex__disposed = client.__knex__disposed || 'read aborted';
    if (client.connection && client.connection.stream) client.connection.stream.destroy();
  }
  await knex.client.releaseConnection(client);
}

module.exports = {
  cursorBatches,
  rowsAsSent,
  readyFor,
  connectionLost,
  closeCursor,
  CURSOR_BATCH,
};
