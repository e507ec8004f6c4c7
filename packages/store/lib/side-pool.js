'use strict';

const pg = require('pg');
const { loadConfig } = require('@mailgate/core');

/*
 * The store's own node-postgres pools beside knex's (prepared-reads.js: named reads with generic
 * plans; append-writer.js: an append's pipelined transaction): the same server and credentials
 * as knex's pool, a session setting of their own (plan_cache_mode), the same limits on waiting,
 * and an 'error' on a connection — idle or checked out — never ending the process.
 */

/**
 * The connection settings of knex's pool as node-postgres options, a session setting added.
 * @param {import('knex').Knex} knex
 * @param {string} options a `-c name=value` PostgreSQL startup option
 * @returns {object}
 */
function settingsOf(knex, options) {
  const c = knex.client.connectionSettings || knex.client.config.connection;
  // knex keeps a parsed URL's password non-enumerable (out of logs): copied by name.
  const base = typeof c === 'string' ? { connectionString: c } : { ...c, password: c.password };
  if (base.password === undefined) delete base.password;
  base.options = base.options ? `${base.options} ${options}` : options;
  return base;
}

/**
 * A pool on knex's server with `options` on every session.
 * @param {import('knex').Knex} knex
 * @param {{options: string, max: number, pipeline?: boolean}} opts
 * @returns {pg.Pool}
 */
function sidePool(knex, { options, max, pipeline }) {
  const settings = settingsOf(knex, options);
  const pool = new pg.Pool({
    ...settings,
    ...(pipeline ? { pipeline: true } : {}),
    max,
    // A caller waits for a connection (all busy, or the server not answering) no longer than
    // the connection's own setting or knex's pool (acquireConnectionTimeout, 60 s by default);
    // without either a FETCH of `mailgate imap` or a delivery would wait for ever.
    connectionTimeoutMillis:
      settings.connectionTimeoutMillis ||
      Number(knex.client && knex.client.config.acquireConnectionTimeout) ||
      60000,
    // As the main pool's (MAILGATE_DB_IDLE_TIMEOUT_MS).
    idleTimeoutMillis: loadConfig().dbIdleTimeoutMs,
    // An idle connection never holds the process open (a caller that destroys only the knex
    // pool, as tests do, still exits).
    allowExitOnIdle: true,
  });
  // A server restart or DROP DATABASE … FORCE ends idle connections: the pool drops them and
  // the next caller opens a new one (an unhandled 'error' would end the process).
  pool.on('error', () => {});
  return pool;
}

/**
 * Runs `fn` with a client checked out of `pool`, which has no 'error' listener of the pool's
 * while out: a backend ended meanwhile (restart, failover, pg_terminate_backend) would emit an
 * unhandled 'error' and end the process. `onLost` hears it; the client is then not given back.
 * @template T
 * @param {pg.Pool} pool
 * @param {(client: pg.PoolClient, lost: () => boolean) => Promise<T>} fn its second argument
 *   says whether the connection was lost
 * @param {{onLost?: (err: Error) => void, drop?: (client: pg.PoolClient, err: Error|null, lost: boolean) => boolean}} [opts]
 *   drop: whether to close the client rather than give it back
 * @returns {Promise<T>}
 */
async function withClient(pool, fn, opts = {}) {
  const client = await pool.connect();
  let lost = false;
  let failure = null;
  const onError = (err) => {
    lost = true;
    if (opts.onLost) opts.onLost(err);
  };
  client.on('error', onError);
  try {
    return await fn(client, () => lost);
  } catch (err) {
    failure = err;
    throw err;
  } finally {
    client.off('error', onError);
    client.release(lost || Boolean(opts.drop && opts.drop(client, failure, lost)));
  }
}

module.exports = { sidePool, settingsOf, withClient };
