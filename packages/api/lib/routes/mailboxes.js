'use strict';

const schemas = require('../schemas/mailboxes');

/** GET /mailboxes: the caller's mailboxes with their counts. */
async function mailboxRoutes(app) {
  app.get(
    '/mailboxes',
    { config: { auth: 'user' }, schema: schemas.listMailboxes },
    async (req) => {
      const list = await app.timed(req, () => app.store.listMailboxes(req.user.userId));
      return { mailboxes: list.map((b) => ({ ...b, highestModseq: b.highestmodseq })) };
    },
  );
}

module.exports = mailboxRoutes;
