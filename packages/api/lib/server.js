'use strict';

const { createLogger, errors, onShutdown } = require('@mailgate/core');
const { createMailService, openDatabase } = require('@mailgate/service');
const { build } = require('./app');
const { pathOf } = require('./plugins/errors');

/*
 * The server entry used by `mailgate serve`: opens the database (embedded PostgreSQL or
 * DATABASE_URL, migrations applied) with the API's timeouts, creates the mail service on it
 * (or uses the caller's, shared with the IMAP server), builds the app, listens on HOST:PORT,
 * and shuts down gracefully on SIGTERM/SIGINT (in-flight requests finish, then the service,
 * the pool and the embedded server are released).
 */

// Explicit timeouts towards PostgreSQL: a statement never runs longer than 15 s, a
// connection attempt gives up after 3 s and a request waits at most 5 s for a pooled
// connection — so while PostgreSQL is down requests fail fast with 503 instead of hanging.
const PG_TIMEOUTS = {
  statement_timeout: 15000,
  idle_in_transaction_session_timeout: 60000,
  connectionTimeoutMillis: 3000,
  keepAlive: true,
};

/** The API's database options (openDatabase, the store's, through the service). */
const API_DB = {
  pool: { min: 0, max: 10 },
  connection: PG_TIMEOUTS,
  acquireConnectionTimeout: 5000,
  // knex prints pool errors with console.log; they reach clients as 503 and the server log
  // through the error handler already.
  quiet: true,
};

/**
 * Listens, turning EADDRINUSE into the coded PORT_IN_USE (naming port and host).
 * @param {import('fastify').FastifyInstance} app
 * @param {{port: number, host: string}} where
 */
async function listen(app, where) {
  try {
    await app.listen(where);
  } catch (err) {
    if (err && err.code === 'EADDRINUSE') throw new errors.PORT_IN_USE(where.port, where.host);
    throw err;
  }
}

/**
 * Starts the HTTP API.
 * @param {ReturnType<import('@mailgate/core').loadConfig>} config
 * @param {{log?: import('pino').Logger, onListen?: (url: string) => void, signals?: boolean,
 *   purgeOnStart?: boolean, service?: object, loginLimiter?: object}} [opts] service and
 *   loginLimiter: shared with the IMAP server of the same process
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
  const db = opts.service ? null : await openDatabase(config, API_DB);
  const service =
    opts.service || (await createMailService({ config, knex: db.knex, logger: base }));
  let app;
  try {
    app = await build({
      service,
      logger: log,
      adminToken: config.adminToken,
      loginLimiter: opts.loginLimiter,
      elasticsearchUrl: config.elasticsearchUrl,
      corsOrigins: config.corsOrigins,
      purgeOnStart: opts.purgeOnStart,
    });
    await listen(app, { port: config.port, host: config.host });
  } catch (err) {
    if (app) await app.close().catch(() => {});
    if (db) {
      await service.close();
      await db.close();
    }
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
        if (db) {
          await service.close();
          await db.close();
        }
      })();
    }
    return closing;
  };
  // In-flight requests finish; a hard deadline guards against a stuck one.
  if (opts.signals !== false) onShutdown(log, close);
  if (opts.onListen) opts.onListen(url);
  return { app, url, close };
}

module.exports = { startServer, API_DB };
