'use strict';

const schemas = require('../schemas/transfer');

/*
 * Copy and move between the caller's mailboxes, through the mail service. Uids that are not
 * in the source are skipped (as IMAP does); the answer maps each copied uid to its new uid.
 */
async function transferRoutes(app) {
  const config = { auth: 'user' };
  for (const op of ['copy', 'move']) {
    app.post(`/mailboxes/:mailbox/${op}`, { config, schema: schemas[op] }, async (req) => {
      const be = await app.backendOf(req);
      return app.timed(req, () => be[op](req.params.mailbox, req.body.uids, req.body.target));
    });
  }
}

module.exports = transferRoutes;
