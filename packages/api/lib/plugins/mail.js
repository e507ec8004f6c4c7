'use strict';

const fp = require('fastify-plugin');
const { loadConfig } = require('@mailgate/core');
const { createMailService } = require('@mailgate/service');
const { StreamGate } = require('../streams');

/*
 * The one door to mail: the routes reach backends only through `app.backendOf(req, kind)`,
 * i.e. the mail service's `openBackend(kind, user)` (@mailgate/service) for the caller. Owns
 * the service's lifecycle when build() created it (start-up purge sweep, the Elasticsearch
 * outbox worker, close), and the gate that caps long NDJSON streams (streams.js).
 */

/**
 * The service of a build() that was given a database handle instead of a service.
 * @param {object} opts build() options
 * @param {import('pino').Logger} log
 */
async function ownService(opts, log) {
  // esEnv: another index prefix (MAILGATE_ES_PREFIX), e.g. the benchmark's scratch indexes.
  const env = { ...process.env, ...(opts.esEnv || {}) };
  const config = { ...loadConfig(env), elasticsearchUrl: opts.elasticsearchUrl || null };
  if (opts.home) config.home = opts.home;
  return createMailService({
    env,
    config,
    knex: opts.knex,
    logger: log,
    purge: opts.purge !== false,
    // As the store did before the service: outbox rows whenever a mirror is configured.
    outbox: opts.outbox ?? Boolean(config.elasticsearchUrl || process.env.ELASTICSEARCH_URL),
  });
}

/**
 * @param {import('fastify').FastifyInstance} app
 * @param {object} opts build() options: service, or knex plus elasticsearchUrl, esEnv, esWorker,
 *   purgeOnStart, purge, home; streams
 */
async function mailPlugin(app, opts) {
  const owned = !opts.service;
  const service = opts.service || (await ownService(opts, app.log));
  app.decorate('mailService', service);
  app.decorate('purger', service.purger);
  app.decorate('streams', new StreamGate(opts.streams));

  /**
   * The caller's backend of this kind (default: the request's `?backend=`, else pg);
   * BACKEND_UNAVAILABLE, ES_NOT_CONFIGURED, LEGACY_NOT_CONFIGURED when it cannot be had.
   * @param {import('fastify').FastifyRequest} req
   * @param {string} [kind]
   */
  app.decorate('backendOf', (req, kind) => {
    const k = kind || (req.query && req.query.backend) || 'pg';
    // Server-Timing names this kind (plugins/timing.js): the backend answering the request.
    req.backendKind = k;
    // The token's user, as authentication just read it (no second lookup per request).
    const user = { id: req.user.userId, name: req.user.user };
    return app.timed(req, () => service.openBackend(k, user));
  });

  // The Elasticsearch outbox worker is the service's, beside its purger: started when the
  // app is ready, stopped when it closes. The mirror is opened now, so a missing
  // configuration fails the build, not the start.
  const esWorker = Boolean(opts.elasticsearchUrl && opts.esWorker !== false);
  if (esWorker) service.openMirror();
  // Rows hidden by an earlier run that stopped before purging them (crash, shutdown): listed
  // in the background at start; close waits for the listing, so no query outlives the app.
  let leftovers = Promise.resolve();
  app.addHook('onReady', async () => {
    if (opts.purgeOnStart !== false) {
      leftovers = service
        .resumePurges()
        .catch((err) =>
          app.log.warn({ err: { message: err.message } }, 'could not list pending purges'),
        );
    }
    if (esWorker) service.startOutboxWorker({ log: app.log });
  });
  app.addHook('onClose', async () => {
    if (esWorker) await service.stopOutboxWorker();
    await leftovers;
    if (owned) await service.close();
  });
}

module.exports = fp(mailPlugin, {
  name: 'mailgate-mail',
  fastify: '5.x',
  dependencies: ['mailgate-timing'],
});
