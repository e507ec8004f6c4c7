'use strict';

const fp = require('fastify-plugin');

/*
 * The OpenAPI 3 document (/docs/json) and its UI (/docs), generated from the route schemas.
 * Registered before the route plugins, so that it sees every route.
 */
async function docsPlugin(app) {
  await app.register(require('@fastify/swagger'), {
    openapi: {
      info: {
        title: 'mailgate webmail API',
        version: require('../../package.json').version,
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

module.exports = fp(docsPlugin, { name: 'mailgate-docs', fastify: '5.x' });
