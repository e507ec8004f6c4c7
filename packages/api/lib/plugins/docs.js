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
  // Issue 29.8: the docs page had no Content-Security-Policy. swagger-ui's own policy hashes
  // its inline script and styles; narrowed here to this server alone (no https: styles or
  // fonts from anywhere, no image from the public validator, no framing by other sites, no
  // upgrade-insecure-requests, which would break the page on plain http://127.0.0.1).
  await app.register(require('@fastify/swagger-ui'), {
    routePrefix: '/docs',
    uiConfig: { validatorUrl: null },
    staticCSP: true,
    transformStaticCSP: (header) =>
      `${header
        .replace(/ validator\.swagger\.io/g, '')
        .replace(/ https:/g, '')
        .replace(/ ?upgrade-insecure-requests;/, '')
        .replace("frame-ancestors 'self'", "frame-ancestors 'none'")
        .trim()} connect-src 'self'; form-action 'none';`,
  });
}

module.exports = fp(docsPlugin, { name: 'mailgate-docs', fastify: '5.x' });
