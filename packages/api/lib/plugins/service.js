'use strict';

const fp = require('fastify-plugin');
const { loadConfig } = require('@mailgate/core');
const { createMailService } = require('@mailgate/service');

/*
 * The mail service (@mailgate/service) of the app: `app.mailService`, and
 * `app.backendOf(req)`, the caller's backend of the kind named by `?backend=` (pg when
 * absent). Route plugins that reach mail through the service use only this; the service owns
 * the store, the purge of expunged rows and the legacy configuration behind it.
 */

/**
 * @param {import('fastify').FastifyInstance} app
 * @param {object} opts build() options: knex, home, elasticsearchUrl, esEnv
 */
async function servicePlugin(app, opts) {
  const env = opts.esEnv ? { ...process.env, ...opts.esEnv } : process.env;
  const base = loadConfig(env);
  const service = await createMailService({
    env,
    knex: opts.knex,
    logger: app.log,
    config: {
      ...base,
      home: opts.home || base.home,
      elasticsearchUrl: opts.elasticsearchUrl || null,
    },
  });
  app.decorate('mailService', service);
  /**
   * The signed-in user's backend of kind `?backend=` (default pg).
   * @param {import('fastify').FastifyRequest} req
   * @param {string} [kind]
   */
  app.decorate('backendOf', (req, kind) =>
    app.timed(req, () =>
      service.openBackend(kind || (req.query && req.query.backend) || 'pg', req.user.user),
    ),
  );
  app.addHook('onClose', () => service.close());
}

module.exports = fp(servicePlugin, {
  name: 'mailgate-service',
  fastify: '5.x',
  dependencies: ['mailgate-timing'],
});
