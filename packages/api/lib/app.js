'use strict';

const http = require('node:http');
const Fastify = require('fastify');
const { toPublic, BY_STATUS } = require('./errors');
const schemas = require('./schemas/common');
const routePlugins = require('./routes');

/*
 * Builds the webmail HTTP API without listening (server.js listens; tests use app.inject).
 * The app is a stack of named plugins: cross-cutting ones first (errors, timing, mail
 * backends, auth, docs), then one plugin per resource under /api/v1 (routes/index.js).
 */

/**
 * Builds the app.
 *
 * @param {object} opts
 * @param {object} [opts.service] the mail service (@mailgate/service); shared with the IMAP
 *   server in `mailgate serve`. The caller closes it.
 * @param {import('knex').Knex} [opts.knex] without a service: a database handle to build one
 *   on (closed with the app; the handle stays the caller's)
 * @param {object} [opts.loginLimiter] a shared @mailgate/core LoginLimiter
 * @param {{perUser?: number, total?: number, stallMs?: number}} [opts.streams] NDJSON stream
 *   caps and the stalled-client timeout (streams.js)
 * @param {boolean} [opts.purge] purge expunged rows in the background (default true)
 * @param {import('pino').Logger|false} [opts.logger] pino logger; false for none
 * @param {string|null} [opts.adminToken] MAILGATE_ADMIN_TOKEN: allows user management routes
 * @param {number} [opts.tokenTtlSeconds] lifetime of session tokens (default 30 days)
 * @param {{max?: number, windowMs?: number}} [opts.loginLimit] failed logins allowed per window
 * @param {boolean} [opts.docs] serve OpenAPI and its UI at /docs (default true)
 * @param {boolean} [opts.purgeOnStart] purge rows left hidden by an earlier run (default true)
 * @param {object} [opts.fastify] extra Fastify options (timeouts)
 * @param {string|null} [opts.elasticsearchUrl] enables backend=es and the outbox worker
 * @param {boolean} [opts.esWorker] run the outbox worker (default true when elasticsearchUrl)
 * @param {object} [opts.esEnv] environment for the mirror (index prefix)
 * @param {string} [opts.home] MAILGATE_HOME (legacy backends' configuration)
 * @param {string[]} [opts.corsOrigins] MAILGATE_CORS_ORIGINS: browser origins allowed to call
 *   the API from another site (none by default)
 * @param {boolean} [opts.webPage] serve the webmail page (@mailgate/web) at / (default true)
 * @returns {Promise<import('fastify').FastifyInstance>} app, with `app.mailService` (the service) and
 *   `app.purger`
 */
async function build(opts) {
  if (!opts || !(opts.service || opts.knex)) {
    throw new TypeError('build: opts.service (or opts.knex) is required');
  }
  // Node enforces requestTimeout on a request's headers only; its body is bounded by
  // headersTimeout, 60 s by default whatever requestTimeout says (a trickled body was cut at
  // 60-65 s where the README says 30, issue 29.8). Both are the one request timeout.
  const requestTimeout = (opts.fastify && opts.fastify.requestTimeout) ?? 30000;
  const app = Fastify({
    ...(opts.logger ? { loggerInstance: opts.logger } : { logger: false }),
    // Explicit timeouts: a slow or stuck client cannot hold a socket for ever.
    connectionTimeout: 30000,
    requestTimeout,
    keepAliveTimeout: 10000,
    bodyLimit: 1024 * 1024,
    // Mailbox names may be up to 512 characters (percent-encoded: longer).
    routerOptions: { maxParamLength: 2048 },
    return503OnClosing: true,
    // Request ids in logs; logs carry method and path only (no query string, no headers).
    requestIdHeader: false,
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: false, allErrors: false } },
    // Malformed URLs (bad percent-encoding, invalid UTF-8 in the path) and similar routing
    // failures get the same error shape as everything else.
    frameworkErrors: (err, req, reply) => {
      const p = toPublic(err);
      reply.code(p.status).send({ error: { code: p.code, message: p.message } });
    },
    // Errors Node's HTTP parser answers before Fastify sees a request (oversized headers or
    // URL, malformed request line, headers not received within requestTimeout).
    clientErrorHandler,
    // Node's defaults, stated: headers (URL included) up to 16 KB, else 431; requestTimeout
    // is enforced by a check every 2 s (Node's default: 30 s).
    http: {
      maxHeaderSize: 16 * 1024,
      connectionsCheckingInterval: 2000,
      ...(requestTimeout > 0 ? { headersTimeout: requestTimeout } : {}),
    },
    ...(opts.fastify || {}),
  });
  for (const s of schemas.all) app.addSchema(s);

  await app.register(require('./plugins/errors'));
  await app.register(require('./plugins/params'));
  await app.register(require('./plugins/timing'));
  await app.register(require('./plugins/cors'), opts);
  await app.register(require('./plugins/mail'), opts);
  await app.register(require('./plugins/auth'), opts);
  if (opts.docs !== false) await app.register(require('./plugins/docs'));
  await app.register(
    async (api) => {
      for (const plugin of routePlugins) await api.register(plugin);
    },
    { prefix: '/api/v1' },
  );
  if (opts.webPage !== false) await app.register(require('./plugins/web-page'));
  return app;
}

/**
 * Answers a client error on the raw socket in the coded shape, then closes it.
 * @param {Error & {code?: string}} err
 * @param {import('node:net').Socket} socket
 */
function clientErrorHandler(err, socket) {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const status =
    err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const [code, message] =
    status === 400 ? ['INVALID_INPUT', 'Malformed HTTP request'] : BY_STATUS[status];
  const body = JSON.stringify({ error: { code, message } });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

module.exports = { build };
