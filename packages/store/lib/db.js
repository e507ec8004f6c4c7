'use strict';

const path = require('node:path');
const { inspect } = require('node:util');
const Knex = require('knex');
const pg = require('pg');
const { EmbeddedPostgres } = require('./embedded-pg');
const { errors } = require('@mailgate/core');

// bigint columns (modseq, ids) fit in a JS number for any realistic mailbox; parse them as
// numbers so JSON output is numeric, as IMAP clients expect MODSEQ to be.
pg.types.setTypeParser(20, (v) => Number(v));

// The store's schema: packages/store/migrations. knex_migrations rows hold file names only,
// so a database migrated from the earlier root folder (same names) finds them all applied.
const MIGRATIONS_DIR = path.resolve(__dirname, '..', 'migrations');

/*
 * knex's own logger prints with console.log, that is on stdout, where one warning (a pool
 * error while a command exits) corrupts the command's `--json` answer: knex speaks on stderr.
 */
const stderrLine = (kind) => (message) => {
  const text = typeof message === 'string' ? message : inspect(message, { depth: 5 });
  process.stderr.write(`knex ${kind}: ${text}\n`);
};
const STDERR_LOG = Object.freeze({
  warn: stderrLine('warning'),
  error: stderrLine('error'),
  deprecate: stderrLine('deprecated'),
  debug: stderrLine('debug'),
});

/**
 * Opens the store's database: DATABASE_URL when set, else the shared embedded PostgreSQL
 * (started on demand). Applies pending migrations.
 *
 * @param {ReturnType<import('@mailgate/core').loadConfig>} config
 * @param {{persistent?: boolean, migrate?: boolean, pool?: {min:number,max:number},
 *   connection?: object, acquireConnectionTimeout?: number, quiet?: boolean, create?: boolean}} [opts]
 *   create: false: an embedded cluster that does not exist yet is NO_DATABASE, not initialised
 *   (read-only commands; DATABASE_URL is used as given)
 *   connection: extra node-postgres options (statement_timeout, connectionTimeoutMillis …);
 *   quiet: no knex console output for pool errors (servers report them as coded errors)
 * @returns {Promise<{knex: import('knex').Knex, url: string, embedded: EmbeddedPostgres|null, close: () => Promise<void>}>}
 */
async function openDatabase(config, opts = {}) {
  let embedded = null;
  let url = config.databaseUrl;
  if (!url) {
    embedded = new EmbeddedPostgres(config.home);
    url = await embedded.acquire({ persistent: opts.persistent, create: opts.create });
  }
  const knex = Knex({
    client: 'pg',
    connection: opts.connection ? { connectionString: url, ...opts.connection } : url,
    ...(opts.acquireConnectionTimeout
      ? { acquireConnectionTimeout: opts.acquireConnectionTimeout }
      : {}),
    log: opts.quiet ? { warn() {}, error() {}, debug() {}, deprecate() {} } : STDERR_LOG,
    pool: {
      min: 0,
      max: 8,
      ...idlePool(config.dbIdleTimeoutMs),
      ...opts.pool,
    },
    migrations: { directory: MIGRATIONS_DIR, tableName: 'knex_migrations' },
  });
  try {
    await knex.raw('SELECT 1');
    if (opts.migrate !== false) await knex.migrate.latest();
  } catch (err) {
    await knex.destroy();
    if (embedded) await embedded.release();
    throw new errors.DB_UNAVAILABLE(err.message);
  }
  let closed = false;
  return {
    knex,
    url,
    embedded,
    async close() {
      if (closed) return;
      closed = true;
      await knex.destroy();
      if (embedded) await embedded.release();
    },
  };
}

/** tarn checks for idle connections every reapIntervalMillis (1 s by default). */
function idlePool(ms) {
  if (!ms) return {};
  return { idleTimeoutMillis: ms, reapIntervalMillis: Math.min(1000, ms) };
}

module.exports = { openDatabase, MIGRATIONS_DIR };
