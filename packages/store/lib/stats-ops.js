'use strict';

/*
 * Planner statistics after bulk writes (issue 35.4). Owns when a COPY/MOVE or a purge re-reads
 * a user's partitions' statistics; must never run ANALYZE inside a write's transaction or
 * under a mailbox lock, nor throw into the write that asked for it.
 *
 * Why: messages partitions are auto-analyzed only after changes of 4x their rows
 * (migrations/20261125140000_analyze_after_inserts.js), so a bulk copy into a new mailbox left
 * the planner without the new mailbox_id: after an IMAP COPY of 21,282 messages, STORE on 1%
 * of them took ~1.7 s and on 20% ~22 s, against 6.6 ms once analyzed. An operation that wrote
 * at least BULK_MIN_ROWS rows and at least BULK_SHARE of the partition's rows (pg_class
 * reltuples, as of the last ANALYZE or VACUUM) schedules an ANALYZE of the user's partitions
 * after its commit, off the client's answer; smaller writes change no plan and run none.
 * Only the key columns are analyzed (analyzeUser keys): a copy or a purge moves the mailbox,
 * uid and expunged distributions and the row counts, not the text ones, and a key-only
 * ANALYZE reads no detoasted text, so its snapshot (which stops HOT pruning database-wide
 * while it runs) stays short. Imports still analyze every column (importer, analyzeUser).
 */

const { perUserPartitions, vacuumSharedPartitions } = require('./citus');

/** Fewest rows a write must touch before it refreshes statistics. */
const BULK_MIN_ROWS = 1000;
/** Smallest share of the partition's rows a write must touch to refresh them. */
const BULK_SHARE = 0.1;

/**
 * Whether `rows` written into a partition of `reltuples` rows (-1 or 0: never analyzed) is a
 * bulk write that leaves its statistics stale.
 * @param {number} rows
 * @param {number} reltuples
 * @returns {boolean}
 */
function isBulkWrite(rows, reltuples) {
  return rows >= BULK_MIN_ROWS && rows >= BULK_SHARE * Math.max(Number(reltuples) || 0, 0);
}

/**
 * After a write of `rows` rows of a user's messages has committed: when it is a bulk write
 * (isBulkWrite), ANALYZE of the user's partitions' key columns in the background. One run
 * per user at a time: a request while one runs makes it run once more after (it may have
 * started before the rows committed). Errors are logged (opts.logger of PgStore), never
 * thrown; settleBackground() awaits the run.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number} rows rows inserted or deleted by the write
 * @returns {Promise<boolean>} whether a refresh was scheduled
 */
async function refreshStatsAfterBulk(store, userId, rows) {
  if (rows < BULK_MIN_ROWS) return false;
  // Citus (citus.js): no per-user partition whose statistics a bulk write could outdate.
  if (!(await perUserPartitions(store.knex))) return false;
  let reltuples;
  try {
    const id = Number(userId);
    const r = await store.knex.raw(`SELECT reltuples FROM pg_class WHERE oid = ?::regclass`, [
      `messages_u${id}`,
    ]);
    reltuples = r.rows.length ? Number(r.rows[0].reltuples) : 0;
  } catch (err) {
    store.logStatsError(userId, err);
    return false;
  }
  if (!isBulkWrite(rows, reltuples)) return false;
  if (!store.statsRuns) store.statsRuns = new Map();
  const run = store.statsRuns.get(userId);
  if (run) {
    run.again = true;
    return true;
  }
  const entry = { again: false, done: null };
  store.statsRuns.set(userId, entry);
  entry.done = (async () => {
    do {
      entry.again = false;
      try {
        await store.analyzeUser(userId, { keys: true });
      } catch (err) {
        store.logStatsError(userId, err);
      }
    } while (entry.again);
    store.statsRuns.delete(userId);
  })();
  return true;
}

/**
 * Waits for the statistics refreshes in flight (part of settleBackground).
 * @param {import('./pg-store').PgStore} store
 * @returns {Promise<void>}
 */
async function settleStats(store) {
  if (!store.statsRuns) return;
  while (store.statsRuns.size) {
    await Promise.all([...store.statsRuns.values()].map((e) => e.done));
  }
}

/**
 * A failed refresh only costs plans until the next one: logged, not thrown.
 * @param {import('./pg-store').PgStore} store
 */
function logStatsError(store, userId, err) {
  if (store.logger) {
    store.logger.warn({ userId, code: err && err.code }, 'planner statistics refresh failed');
  }
}

/**
 * Refreshes the planner statistics of a user's partitions. Run after a bulk import: a new
 * partition has none until autovacuum gets to it, and without them PostgreSQL plans word
 * and substring searches as sequential scans (100-600 ms instead of a few ms on 21k
 * messages).
 * With `keys`, only the columns a copy, move or purge changes the distribution of (user,
 * mailbox, uid, expunged) and the row counts: no text is read (stats-ops.js, after bulk
 * writes).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {{keys?: boolean}} [opts]
 */
async function analyzeUser(store, userId, opts = {}) {
  const id = Number(userId);
  if (!Number.isInteger(id) || id <= 0) throw new Error('invalid user id');
  // Citus (citus.js): a user shares a shard that already has statistics (no new partition
  // per user); the workers' autovacuum keeps them.
  if (!(await perUserPartitions(store.knex))) return;
  // Identifiers cannot be bound parameters; the id is an integer checked above.
  if (opts.keys) {
    const k = 'user_id, mailbox_id, uid';
    await store.knex.raw(
      `ANALYZE messages_u${id} (${k}, expunged), message_words_u${id} (${k}),
         message_chunks_u${id} (${k}), message_sources_u${id} (${k})`,
    );
    return;
  }
  await store.knex.raw(`ANALYZE ${statsTables(id)}`);
}

/**
 * The tables whose statistics a bulk import makes stale: the user's partitions, and
 * thread_keys, which every user shares. message_imap(_lines) and thread_keys were left to
 * autovacuum, and until it came (about a minute after a 20,000-message import) every delivery
 * into that user cost the PostgreSQL backend ~6 ms more: 11-12 ms of CPU per smtp-source
 * delivery against 3.8 with their statistics (bench/results/deliver-2026-11-28-warm, issue
 * 32). The cost was per transaction (10 sessions' group commits paid 2.2 ms a message), i.e.
 * in planning the append's statements. thread_keys holds every user's rows: its ANALYZE samples
 * (bounded by default_statistics_target, not by its size), and imports ending at once take turns
 * on its lock (ShareUpdateExclusive), as they would behind autovacuum.
 * @param {number} id the user's id (an integer, checked by the caller)
 */
function statsTables(id) {
  return [
    `messages_u${id}`,
    `message_words_u${id}`,
    `message_vocab_u${id}`,
    `message_chunks_u${id}`,
    `message_sources_u${id}`,
    `message_imap_u${id}`,
    `message_imap_lines_u${id}`,
    'thread_keys',
  ].join(', ');
}

/**
 * VACUUM (ANALYZE) of a user's partitions: what autovacuum does some time after a bulk
 * import (its insert threshold), done now. The benchmark runs it after loading, untimed, so
 * that the autovacuum of a freshly imported partition (a pass over ~500 MB of trigram and
 * tsvector indexes on 21k messages) does not run beside the timed requests.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 */
async function vacuumUser(store, userId) {
  const id = Number(userId);
  if (!Number.isInteger(id) || id <= 0) throw new Error('invalid user id');
  // Citus (citus.js): no partitions of the user's own; the shared ones, every shard.
  if (!(await perUserPartitions(store.knex))) return vacuumSharedPartitions(store.knex);
  await store.knex.raw(`VACUUM (ANALYZE) ${statsTables(id)}`);
}

module.exports = {
  analyzeUser,
  vacuumUser,
  refreshStatsAfterBulk,
  settleStats,
  logStatsError,
  isBulkWrite,
  BULK_MIN_ROWS,
  BULK_SHARE,
};
