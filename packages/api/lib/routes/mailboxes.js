'use strict';

const schemas = require('../schemas/mailboxes');

/** GET /mailboxes: the caller's mailboxes with their counts. */
async function mailboxRoutes(app) {
  app.get(
    '/mailboxes',
    { config: { auth: 'user' }, schema: schemas.listMailboxes },
    async (req) => {
      const be = await app.backendOf(req);
      return { mailboxes: await app.timed(req, () => be.listMailboxes()) };
    },
  );
}

module.exports = mailboxRoutes;
