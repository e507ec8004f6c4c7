'use strict';

const crypto = require('node:crypto');
const Fastify = require('fastify');
const { PgStore } = require('@mailgate/store');
const { verifyPassword, hashPassword } = require('@mailgate/core');
const { errors, toPublic } = require('./errors');
const schemas = require('./schemas');
const { FailureLimiter } = require('./limiter');
const { Purger } = require('./purger');
const { openMirror, EsWorker } = require('@mailgate/es');
const { serverTiming } = require('./app-helpers');

/**
 * Builds the webmail HTTP API (not listening: see server.js, or use `app.inject` in tests).
 *
 * @param {object} opts
 * @param {import('knex').Knex} opts.knex database handle (the store is built on it)
 * @param {import('pino').Logger|false} [opts.logger] pino logger; false for none
 * @param {string|null} [opts.adminToken] MAILGATE_ADMIN_TOKEN: allows user management routes
 * @param {number} [opts.tokenTtlSeconds] lifetime of session tokens (default 30 days)
 * @param {{max?: number, windowMs?: number}} [opts.loginLimit] failed logins allowed per window
 * @param {boolean} [opts.docs] serve OpenAPI and its UI at /docs (default true)
 * @param {boolean} [opts.purgeOnStart] purge rows left hidden by an earlier run (default true)
 * @param {object} [opts.fastify] extra Fastify options (timeouts)
 * @param {string|null} [opts.elasticsearchUrl] enables backend=es and the outbox worker
 * @param {boolean} [opts.esWorker] run the outbox worker (default true when elasticsearchUrl)
 * @returns {Promise<import('fastify').FastifyInstance>} app, with `app.store` and `app.purger`
 */
async function build(opts) {
  if (!opts || !opts.knex) throw new TypeError('build: opts.knex is required');
  const app = Fastify({
    ...(opts.logger ? { loggerInstance: opts.logger } : { logger: false }),
    // Explicit timeouts: a slow or stuck client cannot hold a socket for ever.
    connectionTimeout: 30000,
    requestTimeout: 30000,
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
    ...(opts.fastify || {}),
  });
  const store = new PgStore(opts.knex);
  const purger = new Purger(store, app.log);
  const limiter = new FailureLimiter(opts.loginLimit);
  const adminHash = opts.adminToken ? sha256(opts.adminToken) : null;
  const tokenTtlSeconds = opts.tokenTtlSeconds || 30 * 24 * 3600;
  app.decorate('store', store);
  app.decorate('purger', purger);
  app.decorateRequest('user', null);
  app.decorateRequest('backendMs', null);

  for (const s of schemas.all) app.addSchema(s);

  if (opts.docs !== false) {
    await app.register(require('@fastify/swagger'), {
      openapi: {
        info: {
          title: 'mailgate webmail API',
          version: require('../package.json').version,
          description: 'Header scans, messages, search, flags and expunge over the mail store.',
        },
        components: {
          securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
        },
        security: [{ bearer: [] }],
      },
      refResolver: { buildLocalReference: (json) => json.$id },
    });
    await app.register(require('@fastify/swagger-ui'), { routePrefix: '/docs' });
  }

  // ---- errors: always {error: {code, message}}; never a stack trace or SQL ----
  app.setErrorHandler((err, req, reply) => {
    const p = toPublic(err);
    if (p.internal || p.status >= 500) {
      req.log[p.status >= 500 ? 'error' : 'warn'](
        { err: { message: err.message, code: err.code, stack: err.stack } },
        'request failed',
      );
    }
    if (p.status === 503) reply.header('Retry-After', '2');
    if (p.status === 401) reply.header('WWW-Authenticate', 'Bearer');
    if (p.code === 'TOO_MANY_ATTEMPTS' && err.retryAfter) {
      reply.header('Retry-After', String(err.retryAfter));
    }
    reply
      .code(p.status)
      .type('application/json')
      .send({ error: { code: p.code, message: p.message } });
  });
  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send({
      error: { code: 'NOT_FOUND', message: `No such route: ${req.method} ${pathOf(req)}` },
    });
  });

  // The default query-string parser keeps malformed escapes as literal text; refuse them
  // instead, so invalid UTF-8 is a clear 400 rather than a silent search for "%FF".
  app.addHook('onRequest', async (req) => {
    const i = req.url.indexOf('?');
    if (i < 0) return;
    try {
      decodeURIComponent(req.url.slice(i + 1).replace(/\+/g, ' '));
    } catch {
      throw new errors.INVALID_INPUT('query string is not valid percent-encoded UTF-8');
    }
  });

  // ---- auth: every route says what it needs in config.auth ('user', 'admin' or 'none') ----
  app.addHook('onRequest', async (req) => {
    const need = req.routeOptions.config && req.routeOptions.config.auth;
    if (!need || need === 'none') return;
    const token = bearer(req);
    if (need === 'admin') {
      if (token && adminHash && crypto.timingSafeEqual(sha256(token), adminHash)) {
        req.user = { admin: true };
        return;
      }
      if (token && (await store.findToken(token))) {
        throw new errors.FORBIDDEN('This route needs the admin token (MAILGATE_ADMIN_TOKEN)');
      }
      throw new errors.UNAUTHORIZED();
    }
    const found = token ? await store.findToken(token) : null;
    if (!found) throw new errors.UNAUTHORIZED();
    req.user = found;
  });

  // ---- Server-Timing: the time spent in the backend, on every data response ----
  app.addHook('onSend', async (req, reply, payload) => {
    if (req.backendMs != null && !reply.hasHeader('server-timing')) {
      reply.header('Server-Timing', serverTiming(req.backendMs));
    }
    return payload;
  });

  /**
   * Runs fn as backend work, adding its duration to the request's Server-Timing.
   * @template T
   * @param {import('fastify').FastifyRequest} req
   * @param {() => Promise<T>} fn
   * @returns {Promise<T>}
   */
  const timed = async (req, fn) => {
    const t0 = process.hrtime.bigint();
    try {
      return await fn();
    } finally {
      req.backendMs = (req.backendMs || 0) + Number(process.hrtime.bigint() - t0) / 1e6;
    }
  };

  // Elasticsearch mirror (ELASTICSEARCH_URL): backend=es searches, and the outbox worker.
  let mirror = null;
  let esWorker = null;
  if (opts.elasticsearchUrl) {
    // esEnv: another index prefix (MAILGATE_ES_PREFIX), e.g. the benchmark's scratch indexes.
    mirror = openMirror({ elasticsearchUrl: opts.elasticsearchUrl }, opts.knex, {
      log: app.log,
      ...(opts.esEnv ? { env: opts.esEnv } : {}),
    });
    if (opts.esWorker !== false) esWorker = new EsWorker({ ...mirror, log: app.log });
  }
  const ctx = {
    store,
    mirror,
    purger,
    timed,
    limiter,
    tokenTtlSeconds,
    verifyLogin: (password, hash) => verifyPassword(password, hash || dummyHash()),
    hashPassword,
  };
  await app.register(require('./routes'), { prefix: '/api/v1', ctx });

  // Rows hidden by an earlier run that stopped before purging them (crash, shutdown): listed
  // in the background at start; close waits for the listing, so no query outlives the app.
  let leftovers = Promise.resolve();
  app.addHook('onReady', async () => {
    if (opts.purgeOnStart === false) return;
    leftovers = store.pendingPurges().then(
      (list) => list.forEach((p) => purger.schedule(p.userId, p.mailboxId)),
      (err) => app.log.warn({ err: { message: err.message } }, 'could not list pending purges'),
    );
  });
  app.addHook('onReady', async () => {
    if (esWorker) esWorker.start();
  });
  app.addHook('onClose', async () => {
    if (esWorker) await esWorker.stop();
    if (mirror) await mirror.close();
    await leftovers;
    await purger.close();
  });
  return app;
}

let dummy = null;
// Verifying against a real hash when the user does not exist keeps the answer time the same,
// so timing does not reveal which user names exist.
function dummyHash() {
  if (!dummy) dummy = 'scrypt$16384$8$1$' + 'A'.repeat(22) + '==$' + 'A'.repeat(43) + '=';
  return dummy;
}

function sha256(s) {
  return crypto.createHash('sha256').update(String(s)).digest();
}

function bearer(req) {
  const h = req.headers.authorization;
  if (typeof h !== 'string') return null;
  const m = /^Bearer\s+(\S{1,512})\s*$/i.exec(h);
  return m ? m[1] : null;
}

function pathOf(req) {
  const u = req.url || '';
  const i = u.indexOf('?');
  return (i < 0 ? u : u.slice(0, i)).slice(0, 200);
}

module.exports = { build, serverTiming, pathOf };
