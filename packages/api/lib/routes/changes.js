'use strict';

const schemas = require('../schemas/changes');

/* The sync feed of a mailbox (changed flags, arrivals, expunges after a modseq), via the service. */
async function changesRoutes(app) {
  app.get(
    '/mailboxes/:mailbox/changes',
    { config: { auth: 'user' }, schema: schemas.changes },
    async (req) => {
      const be = await app.backendOf(req);
      return app.timed(req, () => be.changesSince(req.params.mailbox, req.query.since));
    },
  );
}

module.exports = changesRoutes;
