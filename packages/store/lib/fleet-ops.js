'use strict';

const { errors } = require('@mailgate/core');

/*
 * The accounts of a whole-server migration (`migration_accounts`,
 * packages/store/migrations/20261128330100_migration_accounts.js) and the locks that keep the fleet's workers
 * apart: one worker per account at a time, at most N accounts per upstream host at a time.
 * Both are session advisory locks on a connection the worker holds for the account's run, so a
 * worker killed with SIGKILL releases them the moment PostgreSQL sees its socket close; no
 * lease to time out. Also the connection adapter pg-boss runs its own SQL through (queueDb):
 * the queue's statements are the library's, on this store's pool. Never stores a password:
 * `password_source` names where a worker reads it (`env:VAR`, `file:/path`). Plain
 * functions taking the store first (PgStore's methods of the same names call them).
 */

// First keys of the fleet's advisory locks (the second is the user id, or the host's hash):
// apart from IMPORT_LOCK_SPACE (30003) and every other lock of the store.
const ACCOUNT_LOCK_SPACE = 33001;
const HOST_SLOT_SPACE = 33100; // + slot number (0 … perHost-1)

const STATES = Object.freeze(['queued', 'running', 'verified', 'cutover', 'failed']);
const FIELDS = Object.freeze([
  'state',
  'attempts',
  'error_code',
  'error_message',
  'messages',
  'bytes',
  'run_base_messages',
  'upstream_messages',
  'upstream_bytes',
  'worker',
  'started_at',
  'finished_at',
]);

/**
 * Registers (or re-registers) one account to migrate: the user is created when missing and
 * routed to `proxy` (their clients keep working through the relay), the row is queued again
 * unless it was already cut over. One transaction.
 * @param {import('./pg-store').PgStore} store
 * @param {{user: string, host: string, port: number, login: string, passwordSource: string,
 *   security: string, folders: string[]|null}} a
 * @returns {Promise<{user: string, userId: number, state: string, queued: boolean}>}
 */
async function registerMigrationAccount(store, a) {
  // The user as an import makes it (with its partitions), before the row that points to it.
  await store.ensureUser(a.user);
  return store.knex.transaction(async (trx) => {
    const u = await trx('users').where({ name: a.user }).forUpdate().first('id', 'route');
    // updated_at from the new row's default, not now() in the SET: Citus refuses a function
    // that is not IMMUTABLE in DO UPDATE SET (store citus.js).
    const r = await trx.raw(
      `INSERT INTO migration_accounts
         (user_id, upstream_host, upstream_port, login, password_source, security, folders)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (user_id) DO UPDATE SET
         upstream_host = EXCLUDED.upstream_host, upstream_port = EXCLUDED.upstream_port,
         login = EXCLUDED.login, password_source = EXCLUDED.password_source,
         security = EXCLUDED.security, folders = EXCLUDED.folders,
         state = CASE WHEN migration_accounts.state = 'cutover' THEN 'cutover' ELSE 'queued' END,
         attempts = CASE WHEN migration_accounts.state = 'cutover'
                         THEN migration_accounts.attempts ELSE 0 END,
         error_code = NULL, error_message = NULL, updated_at = EXCLUDED.updated_at
       RETURNING state`,
      [u.id, a.host, a.port, a.login, a.passwordSource, a.security, a.folders],
    );
    const state = r.rows[0].state;
    // A cut-over account keeps its route: re-registering the fleet never moves it back.
    if (state !== 'cutover' && u.route !== 'proxy') {
      await trx('users').where({ id: u.id }).update({ route: 'proxy' });
    }
    return { user: a.user, userId: u.id, state, queued: state === 'queued' };
  });
}

/**
 * One account's row with its user name, or null.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 */
async function migrationAccount(store, userId) {
  const r = await store.knex.raw(
    `SELECT a.*, u.name, u.route FROM migration_accounts a JOIN users u ON u.id = a.user_id
      WHERE a.user_id = ?`,
    [userId],
  );
  return r.rows[0] ? accountOf(r.rows[0]) : null;
}

/**
 * Every account of the fleet, by user name, with the time now (one clock for rates).
 * @param {import('./pg-store').PgStore} store
 * @returns {Promise<{now: Date, accounts: object[]}>}
 */
async function migrationAccounts(store) {
  const r = await store.knex.raw(
    `SELECT a.*, u.name, u.route, now() AS now
       FROM migration_accounts a JOIN users u ON u.id = a.user_id ORDER BY u.name`,
  );
  const now = r.rows[0] ? r.rows[0].now : new Date();
  return { now, accounts: r.rows.map(accountOf) };
}

/**
 * Updates an account's state and figures (only the named columns).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {object} fields columns of FIELDS
 */
async function updateMigrationAccount(store, userId, fields) {
  const set = {};
  for (const [k, v] of Object.entries(fields)) {
    if (!FIELDS.includes(k)) throw new Error(`migration_accounts: no column ${k}`);
    set[k] = v;
  }
  if (set.state && !STATES.includes(set.state)) {
    throw new errors.USAGE(`invalid migration state ${set.state}`);
  }
  set.updated_at = store.knex.fn.now();
  await store.knex('migration_accounts').where({ user_id: userId }).update(set);
}

/**
 * Adds what one import batch stored to the running account's figures.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number} messages
 * @param {number} bytes
 */
async function addMigrationProgress(store, userId, messages, bytes) {
  await store.knex.raw(
    `UPDATE migration_accounts SET messages = messages + ?, bytes = bytes + ?, updated_at = now()
      WHERE user_id = ?`,
    [messages, bytes, userId],
  );
}

/**
 * What the store holds of a user now (a resumed run starts its figures from here).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @returns {Promise<{messages: number, bytes: number}>}
 */
async function userMailTotals(store, userId) {
  const r = await store.knex.raw(
    `SELECT count(*) AS n, coalesce(sum(size), 0) AS b FROM messages
      WHERE user_id = ? AND NOT expunged`,
    [userId],
  );
  return { messages: Number(r.rows[0].n), bytes: Number(r.rows[0].b) };
}

/**
 * How many accounts of one upstream host are running now (the per-host rate is shared
 * between them).
 * @param {import('./pg-store').PgStore} store
 * @param {string} host
 * @param {number} port
 */
async function runningMigrationsOnHost(store, host, port) {
  const r = await store.knex.raw(
    `SELECT count(*)::int AS n FROM migration_accounts
      WHERE state = 'running' AND upstream_host = ? AND upstream_port = ?`,
    [host, port],
  );
  return r.rows[0].n;
}

/**
 * A connection of the pool held for one account's run, on which the fleet's advisory locks
 * are taken; released (and the locks with it) by `release()`, or by PostgreSQL when the
 * process dies.
 * @param {import('./pg-store').PgStore} store
 * @returns {Promise<{tryAccount: (userId: number) => Promise<boolean>,
 *   tryHostSlot: (host: string, port: number, perHost: number) => Promise<number|null>,
 *   release: () => Promise<void>}>}
 */
async function holdMigrationLocks(store) {
  const client = store.knex.client;
  const conn = await client.acquireConnection();
  const one = async (sql, values) => (await conn.query(sql, values)).rows[0];
  return {
    async tryAccount(userId) {
      return (await one('SELECT pg_try_advisory_lock($1, $2) AS ok', [ACCOUNT_LOCK_SPACE, userId]))
        .ok;
    },
    async tryHostSlot(host, port, perHost) {
      for (let slot = 0; slot < perHost; slot++) {
        const got = await one(
          "SELECT pg_try_advisory_lock($1, hashtext($2 || ':' || $3::text)) AS ok",
          [HOST_SLOT_SPACE + slot, host, port],
        );
        if (got.ok) return slot;
      }
      return null;
    },
    async release() {
      try {
        await conn.query('SELECT pg_advisory_unlock_all()');
      } finally {
        await client.releaseConnection(conn);
      }
    },
  };
}

/**
 * The adapter pg-boss takes instead of a pool of its own (`new PgBoss({db})`): its
 * statements, with $n parameters, on a connection of this store's pool.
 * @param {import('./pg-store').PgStore} store
 * @returns {{executeSql: (text: string, values?: unknown[]) => Promise<{rows: object[]}>}}
 */
function queueDb(store) {
  const client = store.knex.client;
  return {
    async executeSql(text, values) {
      const conn = await client.acquireConnection();
      try {
        return await conn.query(text, values);
      } finally {
        await client.releaseConnection(conn);
      }
    },
  };
}

/** A row as the service reads it (numbers as numbers). */
function accountOf(x) {
  const n = (v) => (v == null ? null : Number(v));
  return {
    userId: x.user_id,
    user: x.name,
    route: x.route,
    host: x.upstream_host,
    port: x.upstream_port,
    login: x.login,
    passwordSource: x.password_source,
    security: x.security,
    folders: x.folders,
    state: x.state,
    attempts: x.attempts,
    error: x.error_code ? { code: x.error_code, message: x.error_message } : null,
    messages: Number(x.messages),
    bytes: Number(x.bytes),
    runBaseMessages: Number(x.run_base_messages),
    upstreamMessages: n(x.upstream_messages),
    upstreamBytes: n(x.upstream_bytes),
    worker: x.worker,
    registeredAt: x.registered_at,
    startedAt: x.started_at,
    finishedAt: x.finished_at,
    updatedAt: x.updated_at,
  };
}

module.exports = {
  registerMigrationAccount,
  migrationAccount,
  migrationAccounts,
  updateMigrationAccount,
  addMigrationProgress,
  userMailTotals,
  runningMigrationsOnHost,
  holdMigrationLocks,
  queueDb,
  STATES,
};
