'use strict';

const schemas = require('../schemas/messages');
const { encodeCursor, decodeCursor } = require('../cursor');
const { NDJSON, wantsNdjson, primed } = require('../ndjson');
const { serverTiming } = require('../plugins/timing');

/*
 * GET /mailboxes/{mailbox}/messages: the header scan, keyset-paged, or the whole mailbox as
 * NDJSON (Accept: application/x-ndjson).
 */
async function messageListRoutes(app) {
  const { store } = app;

  /** Sends an NDJSON stream once its first rows are there (errors before that are JSON). */
  const sendNdjson = async (req, reply, open) => {
    const body = await app.timed(req, () => primed(open()));
    reply.header('Server-Timing', serverTiming(req.backendMs));
    reply.type(`${NDJSON}; charset=utf-8`);
    return reply.send(body);
  };

  /** One page from a backend with scanPage(mailbox, opts) → {rows, next}. */
  const page = async (req, scanPage) => {
    const { order: orderParam, limit, cursor } = req.query;
    const desc = orderParam.startsWith('-');
    const order = desc ? orderParam.slice(1) : orderParam;
    const after = cursor ? decodeCursor(cursor, orderParam) : null;
    const p = await app.timed(req, () => scanPage({ limit, order, desc, after }));
    return { messages: p.rows, nextCursor: p.next ? encodeCursor(orderParam, p.next) : null };
  };

  app.get(
    '/mailboxes/:mailbox/messages',
    { config: { auth: 'user' }, schema: schemas.scan },
    async (req, reply) => {
      const lb = app.legacyOf(req, req.query.backend);
      if (!lb) app.pgOnly(req.query.backend);
      const orderParam = req.query.order;
      const desc = orderParam.startsWith('-');
      const order = desc ? orderParam.slice(1) : orderParam;
      if (lb) {
        const name = req.params.mailbox;
        if (wantsNdjson(req)) return sendNdjson(req, reply, () => lb.streamHeadersNdjson(name));
        return page(req, (opts) => lb.scanPage(name, opts));
      }
      const mb = await app.mailboxOf(req);
      const userId = req.user.userId;
      if (wantsNdjson(req)) {
        return sendNdjson(req, reply, () =>
          store.streamHeadersNdjson(userId, mb.id, { order, desc }),
        );
      }
      return page(req, (opts) => store.scanPage(userId, mb.id, opts));
    },
  );
}

module.exports = messageListRoutes;
