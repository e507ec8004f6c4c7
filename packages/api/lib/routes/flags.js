'use strict';

const { errors } = require('@mailgate/core');
const schemas = require('../schemas/flags');

/*
 * Changes to messages on any backend: flags/keywords (POST …/flags) and IMAP expunge
 * (POST …/expunge; on pg two phases: hidden at once, purged in the background).
 */
async function flagRoutes(app) {
  const user = { auth: 'user' };

  app.post('/mailboxes/:mailbox/flags', { config: user, schema: schemas.setFlags }, async (req) => {
    const { uids, q, add, remove } = req.body;
    if (!add.length && !remove.length) {
      throw new errors.INVALID_INPUT('body must name flags to add or remove');
    }
    const be = await app.backendOf(req);
    return app.timed(req, () => be.setFlags(req.params.mailbox, uids || q, add, remove));
  });

  app.post(
    '/mailboxes/:mailbox/expunge',
    { config: user, schema: schemas.expunge },
    async (req) => {
      const uids = req.body ? req.body.uids : undefined;
      const be = await app.backendOf(req);
      return app.timed(req, () => be.expunge(req.params.mailbox, uids));
    },
  );
}

module.exports = flagRoutes;
