'use strict';

const Knex = require('knex');
const { openDatabase, createLogger, MIGRATIONS_DIR } = require('@mailgate/core');
const { build } = require('./app');
const { pathOf } = require('./plugins/errors');

/*
 * The server entry used by `mailgate serve`: opens the database (embedded PostgreSQL or
 * DATABASE_URL, migrations applied), builds the app, listens on HOST:PORT, and shuts down
 * gracefully on SIGTERM/SIGINT (in-flight requests finish, then the pool and the embedded
 * server are released).
 */

// Explicit timeouts towards PostgreSQL: a statement never runs longer than 15 s, a
// connection attempt gives up after 3 s and a request waits at most 3 s for a pooled
// connection — so while PostgreSQL is down requests fail fast with 503 instead of hanging.
const PG_TIMEOUTS = {
  statement_timeout: 15000,
  idle_in_transaction_session_timeout: 60000,
  connectionTimeoutMillis: 3000,
  keepAlive: true,
};

/**
 * The API's database handle: a pool with the explicit timeouts above.
 * @param {string} url
 * @param {{max?: number}} [opts]
 * @returns {import('knex').Knex}
 */
function apiKnex(url, opts = {}) {
  return Knex({
    client: 'pg',
    connection: { connectionString: url, ...PG_TIMEOUTS },
    pool: { min: 0, max: opts.max || 10 },
    acquireConnectionTimeout: 5000,
    // knex prints pool errors with console.log; they reach clients as 503 and the server
    // log through the error handler already.
    log: { warn() {}, error() {}, debug() {}, deprecate() {} },
    migrations: { directory: MIGRATIONS_DIR },
  });
}

/**
 * Starts the HTTP API.
 * @param {ReturnType<import('@mailgate/core').loadConfig>} config
 * @param {{log?: import('pino').Logger, onListen?: (url: string) => void, signals?: boolean, purgeOnStart?: boolean}} [opts]
 * @returns {Promise<{app: import('fastify').FastifyInstance, url: string, close: () => Promise<void>}>}
 */
async function startServer(config, opts = {}) {
  const base = opts.log || createLogger(config);
  // Request logs: method, path without query string, status, time. Never headers (tokens)
  // or bodies (passwords, mail).
  const log = base.child(
    {},
    {
      serializers: {
        req: (req) => ({ method: req.method, url: pathOf(req), id: req.id }),
        res: (res) => ({ statusCode: res.statusCode }),
      },
    },
  );
  // openDatabase starts/attaches the embedded server and migrates; the API then uses its own
  // pool with the timeouts above (the first handle stays open to keep the embedded server
  // registered for this process).
  const db = await openDatabase(config, { pool: { min: 0, max: 1 } });
  const knex = apiKnex(db.url);
  let app;
  try {
    app = await build({
      knex,
      logger: log,
      adminToken: config.adminToken,
      purgeOnStart: opts.purgeOnStart,
      elasticsearchUrl: config.elasticsearchUrl,
      corsOrigins: config.corsOrigins,
    });
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    if (app) await app.close().catch(() => {});
    await knex.destroy();
    await db.close();
    throw err;
  }
  const addr = app.server.address();
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const url = `http://${host}:${addr.port}`;
  let closing = null;
  const close = () => {
    if (!closing) {
      closing = (async () => {
        await app.close();
        await knex.destroy();
        await db.close();
      })();
    }
    return closing;
  };
  if (opts.signals !== false) {
    const onSignal = (sig) => {
      log.info({ sig }, 'shutting down');
      // In-flight requests finish; a hard deadline guards against a stuck one.
      const t = setTimeout(() => {
        log.error('shutdown timed out');
        process.exit(1);
      }, 15000);
      t.unref();
      close().then(
        () => process.exit(0),
        (err) => {
          log.error({ err: { message: err.message } }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  }
  if (opts.onListen) opts.onListen(url);
  return { app, url, close };
}

module.exports = { startServer, apiKnex };
