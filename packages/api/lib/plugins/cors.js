'use strict';

const fp = require('fastify-plugin');
const { errors } = require('@mailgate/core');

/*
 * Cross-origin calls from browsers (CORS, WHATWG Fetch standard): only from the origins in
 * MAILGATE_CORS_ORIGINS (none by default; `*` for any). Tokens travel in the Authorization
 * header, never in cookies, so no Allow-Credentials is needed. The page at `/` is served from
 * the API's own origin and needs none of this.
 */

const EXPOSED = 'Server-Timing, Retry-After, Content-Disposition, WWW-Authenticate';
const METHODS = 'GET, POST, PATCH, DELETE';
const HEADERS = 'Authorization, Content-Type, Accept';

/**
 * @param {import('fastify').FastifyInstance} app
 * @param {{corsOrigins?: string[]}} opts
 */
async function corsPlugin(app, opts) {
  const origins = new Set(opts.corsOrigins || []);
  const any = origins.has('*');
  const allowed = (o) => typeof o === 'string' && (any || origins.has(o));

  // onRequest, ahead of authentication: a 401 must be readable by the calling page too.
  app.addHook('onRequest', async (req, reply) => {
    if (origins.size) reply.header('Vary', 'Origin');
    const origin = req.headers.origin;
    if (!allowed(origin)) return;
    reply
      .header('Access-Control-Allow-Origin', any ? '*' : origin)
      .header('Access-Control-Expose-Headers', EXPOSED)
      // Server-Timing is also readable from the Resource Timing API of that origin.
      .header('Timing-Allow-Origin', any ? '*' : origin);
  });

  app.options('*', { config: { auth: 'none' }, schema: { hide: true } }, async (req, reply) => {
    const origin = req.headers.origin;
    if (!origin || !req.headers['access-control-request-method']) {
      throw new errors.INVALID_INPUT(
        'OPTIONS is only a CORS preflight: Origin and Access-Control-Request-Method are required',
      );
    }
    if (!allowed(origin)) {
      throw new errors.FORBIDDEN(`Origin ${origin} may not call this API (MAILGATE_CORS_ORIGINS)`);
    }
    reply
      .header('Access-Control-Allow-Methods', METHODS)
      .header('Access-Control-Allow-Headers', HEADERS)
      .header('Access-Control-Max-Age', '600')
      .code(204)
      .send();
  });
}

module.exports = fp(corsPlugin, { name: 'mailgate-cors', fastify: '5.x' });
