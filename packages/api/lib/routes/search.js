'use strict';

const schemas = require('../schemas/search');

/*
 * GET /search: the query language over the caller's mailboxes on any backend, through the
 * mail service: the total and uids per mailbox for every match, and one page of header rows
 * in the order asked for (`order`, `cursor`, `limit`, like the header scan).
 */
async function searchRoutes(app) {
  app.get('/search', { config: { auth: 'user' }, schema: schemas.search }, async (req) => {
    const { q, mailbox, limit, order, cursor, backend } = req.query;
    const be = await app.backendOf(req, backend);
    const r = await app.timed(req, () => be.search(q, { mailbox, limit, order, cursor }));
    return {
      total: r.total,
      mailboxes: r.mailboxes,
      messages: r.rows,
      nextCursor: r.nextCursor,
    };
  });
}

module.exports = searchRoutes;
