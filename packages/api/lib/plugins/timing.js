'use strict';

const fp = require('fastify-plugin');

/*
 * Cross-cutting: Server-Timing on every data response, the time the request spent in the
 * backend, under the name of the backend that answered (pg, es, mbox, maildir, imap: the
 * kind the mail service opened for the request, `req.backendKind`, set by app.backendOf).
 * Requests that reach no mail backend (sign-in, tokens, health) are answered by the store in
 * PostgreSQL: pg. Routes wrap backend calls in `app.timed(req, fn)`; NDJSON routes set the
 * header themselves before the body starts (see serverTiming).
 */

/** Metric names a Server-Timing header can carry: the backend kinds. */
const BACKEND_NAMES = new Set(['pg', 'es', 'mbox', 'maildir', 'imap']);

/**
 * Server-Timing header value for time spent in the backend (milliseconds).
 * @param {number} ms
 * @param {string} [backend] the kind that answered (default pg)
 * @returns {string}
 */
function serverTiming(ms, backend = 'pg') {
  // Only a known kind becomes a header token: the kind comes from the query string (the
  // schemas restrict it already; this keeps the header safe whatever a route passes).
  const name = BACKEND_NAMES.has(backend) ? backend : 'pg';
  return `${name};dur=${ms.toFixed(2)};desc="backend ${name}"`;
}

async function timingPlugin(app) {
  app.decorateRequest('backendMs', null);
  app.decorateRequest('backendKind', null);
  /**
   * Runs fn as backend work, adding its duration to the request's Server-Timing.
   * @template T
   * @param {import('fastify').FastifyRequest} req
   * @param {() => Promise<T>} fn
   * @returns {Promise<T>}
   */
  app.decorate('timed', async (req, fn) => {
    const t0 = process.hrtime.bigint();
    try {
      return await fn();
    } finally {
      req.backendMs = (req.backendMs || 0) + Number(process.hrtime.bigint() - t0) / 1e6;
    }
  });
  app.addHook('onSend', async (req, reply, payload) => {
    if (req.backendMs != null && !reply.hasHeader('server-timing')) {
      reply.header('Server-Timing', serverTiming(req.backendMs, req.backendKind || 'pg'));
    }
    return payload;
  });
}

module.exports = fp(timingPlugin, { name: 'mailgate-timing', fastify: '5.x' });
module.exports.serverTiming = serverTiming;
