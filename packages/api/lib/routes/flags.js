'use strict';

const { errors } = require('@mailgate/core');
const schemas = require('../schemas/flags');

/*
 * Changes to messages: flags/keywords (POST …/flags) and IMAP expunge (POST …/expunge, two
 * phases: hidden at once, purged in the background by app.purger).
 */
async function flagRoutes(app) {
  const { store, purger } = app;
  const user = { auth: 'user' };

  app.post('/mailboxes/:mailbox/flags', { config: user, schema: schemas.setFlags }, async (req) => {
    const { uids, q, add, remove } = req.body;
    if (!add.length && !remove.length) {
      throw new errors.INVALID_INPUT('body must name flags to add or remove');
    }
    const lb = app.legacyOf(req, req.query.backend);
    if (lb) {
      return app.timed(req, () => lb.setFlags(req.params.mailbox, { uids, query: q, add, remove }));
    }
    app.pgOnly(req.query.backend);
    const mb = await app.mailboxOf(req);
    return app.timed(req, () =>
      store.setFlags(req.user.userId, mb.id, { uids, query: q, add, remove }),
    );
  });

  app.post(
    '/mailboxes/:mailbox/expunge',
    { config: user, schema: schemas.expunge },
    async (req) => {
      const uids = req.body ? req.body.uids : undefined;
      const lb = app.legacyOf(req, req.query.backend);
      if (lb) return app.timed(req, () => lb.expunge(req.params.mailbox, { uids }));
      app.pgOnly(req.query.backend);
      const mb = await app.mailboxOf(req);
      const r = await app.timed(req, () => store.expunge(req.user.userId, mb.id, { uids }));
      if (r.expunged.length) purger.schedule(req.user.userId, mb.id);
      return r;
    },
  );
}

module.exports = flagRoutes;
