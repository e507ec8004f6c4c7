'use strict';

/*
 * The store's prepared reads (issue 35.4, "fetch one"): hot per-command statements run as named
 * statements whose plan PostgreSQL keeps per connection, so a call is bind and execute only.
 * Owns a small pool of its own and the statements sent on it; never writes, and holds no SQL of
 * its own (the concern modules pass theirs).
 *
 * Why a pool of its own: PostgreSQL plans the first FETCH of a message in 0.2-0.3 ms and runs it
 * in ~0.03 (EXPLAIN ANALYZE on the bench's large mailbox). A named statement alone does not help:
 * with `plan_cache_mode = auto` PostgreSQL keeps making custom plans for it, because a generic
 * plan over a partitioned table is costed over every partition. Forcing generic plans is a
 * session setting (`plan_cache_mode`), and on the main pool it would also make knex's unnamed
 * statements generic, planned over every user's partitions (checked: `Append … Subplans
 * Removed`). So these sessions are opened with `plan_cache_mode = force_generic_plan` and carry
 * named statements only.
 *
 * Why the user's own partition is named in the statement (partitionOf): a generic plan over the
 * partitioned parent holds every user's partition and, in PostgreSQL 17, locks them all at each
 * execution before pruning them: with 1,000 partitions it was slower than the unnamed statement
 * (bench/results/imap-first-fetch-2026-11-28). A
 * statement on `message_sources_u<id>` is one small plan per user and connection; a connection
 * that has prepared MAX_STATEMENTS of them is closed after its statement and replaced, which
 * bounds PostgreSQL's and the driver's memory for them. Not on Citus (citus.js point 8).
 */

const { sidePool, withClient } = require('./side-pool');
const { perUserPartitions } = require('./citus');

// Prepared statements one connection keeps before it is replaced (one per user and statement).
const MAX_STATEMENTS = 256;
// Connections of the prepared pool: as many statements at once as the main pool's default.
const POOL_MAX = 8;
const GENERIC = '-c plan_cache_mode=force_generic_plan';

class PreparedReads {
  /** @param {import('knex').Knex} knex the store's knex: its settings, and its query events */
  constructor(knex) {
    this.knex = knex;
    this.pool = null;
    this.closed = false;
  }

  /** The pool, opened at the first statement (side-pool.js: settings, limits, errors). */
  open() {
    if (!this.pool) this.pool = sidePool(this.knex, { options: GENERIC, max: POOL_MAX });
    return this.pool;
  }

  /**
   * Runs a named statement and returns its rows. Emitted as a knex 'query' event too, so that
   * whoever counts the store's statements (test-support statementsDuring) counts this one.
   * @param {string} name unique per text
   * @param {string} text SQL with $n parameters
   * @param {any[]} values
   * @returns {Promise<object[]>}
   */
  async rows(name, text, values) {
    if (this.closed) throw new Error('prepared reads closed');
    this.knex.emit('query', { method: 'raw', sql: text, bindings: values, options: { name } });
    // A failed statement's connection is not given back (nor one past MAX_STATEMENTS).
    const once = () =>
      withClient(
        this.open(),
        async (client) => {
          if (!client.mgNames) client.mgNames = new Set();
          client.mgNames.add(name);
          const r = await client.query({ name, text, values });
          return r.rows;
        },
        { drop: (client, err) => err !== null || client.mgNames.size >= MAX_STATEMENTS },
      );
    // "cached plan must not change result type" (0A000): another process changed a table this
    // statement reads (a migration during a rolling upgrade) after this connection had
    // prepared it. The connection is dropped with the error and a read is safe to send again:
    // on the next connection, which may have prepared it too, until one prepares it anew (at
    // most one try per pooled connection; review finding F6: each of the pool's connections
    // failed one LMTP recipient with a 4xx).
    for (let tries = 0; ; tries++) {
      try {
        return await once();
      } catch (err) {
        if (!err || err.code !== '0A000' || tries >= POOL_MAX) throw err;
      }
    }
  }

  /**
   * The prepared statements of one idle connection with how often PostgreSQL used a generic
   * or a custom plan for each (pg_prepared_statements; tests and diagnostics).
   * @returns {Promise<Array<{name: string, generic_plans: number, custom_plans: number}>>}
   */
  async plans() {
    return withClient(this.open(), async (client) => {
      const r = await client.query(
        'SELECT name, generic_plans, custom_plans FROM pg_prepared_statements ORDER BY name',
      );
      return r.rows.map((x) => ({
        name: x.name,
        generic_plans: Number(x.generic_plans),
        custom_plans: Number(x.custom_plans),
      }));
    });
  }

  /** Closes the pool (service close). */
  async close() {
    this.closed = true;
    const p = this.pool;
    this.pool = null;
    if (p) await p.end();
  }
}

/** The store's PreparedReads (made at first use). */
function preparedOf(store) {
  if (!store.prepared) store.prepared = new PreparedReads(store.knex);
  return store.prepared;
}

/**
 * The table a user's rows of `table` are read from by a prepared statement: the user's own
 * partition on a single PostgreSQL; null when turned off (MAILGATE_PG_PREPARED_READS=0) and on Citus, where prepared reads are not used (citus.js
 * point 8: with generic plans the coordinator answers "could not create distributed plan" for
 * the join of two distributed tables on a parameter).
 * @param {import('./pg-store').PgStore} store
 * @param {string} table a partitioned table (message_sources …)
 * @param {number} userId
 * @returns {Promise<string|null>}
 */
async function partitionOf(store, table, userId) {
  const id = Number(userId);
  if (!Number.isInteger(id) || id <= 0) throw new Error('invalid user id');
  // An identifier cannot be a bound parameter; the id is an integer the store generated.
  if (store.preparedReads === false) return null; // MAILGATE_PG_PREPARED_READS=0
  return (await perUserPartitions(store.knex)) ? `${table}_u${id}` : null;
}

/**
 * Closes the prepared reads' pool (before the main pool is destroyed).
 * @param {import('./pg-store').PgStore} store
 */
async function closePreparedReads(store) {
  if (store.prepared) await store.prepared.close();
  store.prepared = null;
}

/**
 * The prepared statements of one connection of the pool and their plan counts (tests).
 * @param {import('./pg-store').PgStore} store
 */
function preparedPlans(store) {
  return preparedOf(store).plans();
}

module.exports = {
  PreparedReads,
  preparedOf,
  partitionOf,
  closePreparedReads,
  preparedPlans,
  MAX_STATEMENTS,
};
