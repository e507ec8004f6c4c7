'use strict';

const schemas = require('../schemas/search');

/*
 * GET /search: the query language over the caller's mailboxes on any backend; uids per
 * mailbox and the total for every match, header rows for the first `limit`.
 */
async function searchRoutes(app) {
  app.get('/search', { config: { auth: 'user' }, schema: schemas.search }, async (req) => {
    const { q, mailbox, limit, backend } = req.query;
    const be = await app.backendOf(req, backend);
    const r = await app.timed(req, () => be.search(q, { mailbox, limit }));
    return { total: r.total, mailboxes: r.mailboxes, messages: r.rows };
  });
}

module.exports = searchRoutes;
