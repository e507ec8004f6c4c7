'use strict';

const fp = require('fastify-plugin');

/*
 * Cross-cutting: Server-Timing on every data response, the time the request spent in the
 * backend. Routes wrap backend calls in `app.timed(req, fn)`; NDJSON routes set the header
 * themselves before the body starts (see serverTiming).
 */

/**
 * Server-Timing header value for time spent in the backend (milliseconds).
 * @param {number} ms
 * @returns {string}
 */
function serverTiming(ms) {
  return `pg;dur=${ms.toFixed(2)};desc="backend pg"`;
}

async function timingPlugin(app) {
  app.decorateRequest('backendMs', null);
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
      reply.header('Server-Timing', serverTiming(req.backendMs));
    }
    return payload;
  });
}

module.exports = fp(timingPlugin, { name: 'mailgate-timing', fastify: '5.x' });
module.exports.serverTiming = serverTiming;
