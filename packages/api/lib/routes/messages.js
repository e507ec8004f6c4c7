'use strict';

const schemas = require('../schemas/messages');
const { encodeCursor, decodeCursor } = require('../cursor');
const { NDJSON, wantsNdjson, primed } = require('../ndjson');
const { serverTiming } = require('../plugins/timing');
const { listRowOf } = require('@mailgate/service');

/*
 * GET /mailboxes/{mailbox}/messages: the header scan of any backend, keyset-paged, or the
 * whole mailbox as NDJSON (Accept: application/x-ndjson) under the stream gate (streams.js).
 * `view=list` answers the list view (what a message list shows, no recipients or preview):
 * for a whole mailbox a sixth of the bytes, and on pg served from its own cache.
 */
async function messageListRoutes(app) {
  /** Streams the mailbox once its first rows are there (errors before that are JSON). */
  const sendNdjson = async (req, reply, be) => {
    const release = app.streams.acquire(req.user.user);
    try {
      const opts = { order: req.query.order || 'uid' };
      const source =
        req.query.view === 'list'
          ? be.scanListNdjson(req.params.mailbox, opts)
          : be.scanNdjson(req.params.mailbox, opts);
      const body = await app.timed(req, () => primed(source));
      app.streams.watch(reply.raw, release);
      reply.header('Server-Timing', serverTiming(req.backendMs, be.kind));
      reply.type(`${NDJSON}; charset=utf-8`);
      return reply.send(body);
    } catch (err) {
      release();
      throw err;
    }
  };

  app.get(
    '/mailboxes/:mailbox/messages',
    { config: { auth: 'user' }, schema: schemas.scan },
    async (req, reply) => {
      const { limit, cursor, backend, view } = req.query;
      // Pages default to newest first by date (issue 30.11: uid order is import order, which
      // is not the order mail was received in); the whole-mailbox NDJSON stream, a feed for
      // clients that keep their own copy, stays in uid order, the list cache's.
      if (wantsNdjson(req)) {
        return sendNdjson(req, reply, await app.backendOf(req, backend));
      }
      const order = req.query.order || '-date';
      const inner = cursor ? decodeCursor(cursor, order) : undefined;
      const be = await app.backendOf(req, backend);
      const page = await app.timed(req, () =>
        be.scan(req.params.mailbox, { order, limit, cursor: inner }),
      );
      return {
        messages: view === 'list' ? page.rows.map(listRowOf) : page.rows,
        total: page.total,
        nextCursor: page.nextCursor ? encodeCursor(order, page.nextCursor) : null,
      };
    },
  );
}

module.exports = messageListRoutes;
