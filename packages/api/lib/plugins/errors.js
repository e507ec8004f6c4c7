'use strict';

const fp = require('fastify-plugin');
const { errors, toPublic } = require('../errors');

/*
 * Cross-cutting: every answer that is not a success has the shape {error: {code, message}},
 * with the right status, and never a stack trace or SQL. Owns the error handler, the 404
 * handler and the refusal of malformed query strings; the Fastify constructor's
 * frameworkErrors (app.js) uses the same mapping.
 */

/**
 * Sends the coded error body for err (headers first: Retry-After, WWW-Authenticate).
 * @param {any} err
 * @param {import('fastify').FastifyRequest} req
 * @param {import('fastify').FastifyReply} reply
 */
function sendError(err, req, reply) {
  const p = toPublic(err);
  if (p.internal || p.status >= 500) {
    req.log[p.status >= 500 ? 'error' : 'warn'](
      { err: { message: err.message, code: err.code, stack: err.stack } },
      'request failed',
    );
  }
  if (p.status === 503) reply.header('Retry-After', '2');
  if (p.status === 401) reply.header('WWW-Authenticate', 'Bearer');
  if (p.status === 429 && err.retryAfter) {
    reply.header('Retry-After', String(err.retryAfter));
  }
  reply
    .code(p.status)
    .type('application/json')
    .send({ error: { code: p.code, message: p.message } });
}

/**
 * The path of a request without its query string, cut to 200 characters (logs, messages).
 * @param {{url?: string}} req
 * @returns {string}
 */
function pathOf(req) {
  const u = req.url || '';
  const i = u.indexOf('?');
  return (i < 0 ? u : u.slice(0, i)).slice(0, 200);
}

async function errorsPlugin(app) {
  app.setErrorHandler(sendError);
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
}

module.exports = fp(errorsPlugin, { name: 'mailgate-errors', fastify: '5.x' });
module.exports.sendError = sendError;
module.exports.pathOf = pathOf;
