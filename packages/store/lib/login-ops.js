'use strict';

const crypto = require('node:crypto');

/*
 * Failed-login counts shared by every mailgate process on the database (issue 34.4): the
 * only place that reads or writes `login_failures`. The counting rules are the limiter's
 * (@mailgate/core login-limiter.js); this module only keeps its settled counts, one row per
 * key and window, so a guesser spreading over several processes meets one count. Times are
 * the limiter's clock (milliseconds), so its window is the same in memory and here.
 */

// Rows of ended windows deleted per write: the table stays as small as the live windows
// without a sweeper of its own.
const SWEEP_ROWS = 100;

/**
 * The stored form of a limiter key: its SHA-256 in hex. A key holds a typed user name and
 * an address (any length, any characters, NUL included, which text cannot hold); a digest
 * has one size, and a table dump does not list who was guessed at.
 * @param {string} key
 */
function storedKey(key) {
  return crypto.createHash('sha256').update(String(key)).digest('hex');
}

/**
 * The settled failure counts of these keys whose window has not ended at `nowMs`.
 * @param {import('./pg-store').PgStore} store
 * @param {string[]} keys limiter keys
 * @param {number} nowMs the limiter's clock
 * @returns {Promise<Map<string, {count: number, resetAt: number}>>} by key; absent: none
 */
async function loginFailureCounts(store, keys, nowMs) {
  const stored = keys.map(storedKey);
  const r = await store.knex.raw(
    `SELECT key, count, (extract(epoch FROM reset_at) * 1000)::float8 AS reset_ms
       FROM login_failures WHERE key = ANY(?::text[]) AND reset_at > to_timestamp(?::float8 / 1000.0)`,
    [stored, nowMs],
  );
  const byStored = new Map(r.rows.map((x) => [x.key, x]));
  const out = new Map();
  keys.forEach((k, i) => {
    const row = byStored.get(stored[i]);
    if (row) out.set(k, { count: row.count, resetAt: Math.round(row.reset_ms) });
  });
  return out;
}

/**
 * Counts one failure on each key in one statement: a key whose window ended (or that has
 * none) starts a new window of `windowMs` at 1. Also deletes a few ended windows.
 * @param {import('./pg-store').PgStore} store
 * @param {string[]} keys
 * @param {number} nowMs
 * @param {number} windowMs
 */
async function addLoginFailure(store, keys, nowMs, windowMs) {
  // Our own keys are left out of the sweep: one statement must not delete and upsert the
  // same row (the upsert restarts an ended window itself).
  const stored = keys.map(storedKey);
  await store.knex.raw(
    `WITH gone AS (
       DELETE FROM login_failures WHERE key IN (
         SELECT key FROM login_failures
          WHERE reset_at <= to_timestamp(?::float8 / 1000.0) AND key <> ALL(?::text[]) LIMIT ?::int))
     INSERT INTO login_failures AS f (key, count, reset_at)
       SELECT k, 1, to_timestamp((?::float8 + ?::float8) / 1000.0) FROM unnest(?::text[]) AS k
     ON CONFLICT (key) DO UPDATE SET
       count = CASE WHEN f.reset_at <= to_timestamp(?::float8 / 1000.0) THEN 1 ELSE f.count + 1 END,
       reset_at = CASE WHEN f.reset_at <= to_timestamp(?::float8 / 1000.0)
                       THEN EXCLUDED.reset_at ELSE f.reset_at END`,
    [nowMs, stored, SWEEP_ROWS, nowMs, windowMs, stored, nowMs, nowMs],
  );
}

/**
 * Forgets the failures of these keys (a successful login resets its user's counters).
 * @param {import('./pg-store').PgStore} store
 * @param {string[]} keys
 */
async function clearLoginFailures(store, keys) {
  await store.knex.raw('DELETE FROM login_failures WHERE key = ANY(?::text[])', [
    keys.map(storedKey),
  ]);
}

module.exports = { loginFailureCounts, addLoginFailure, clearLoginFailures };
