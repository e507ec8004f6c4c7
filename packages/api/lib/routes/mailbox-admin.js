'use strict';

const schemas = require('../schemas/mailbox-admin');

/*
 * Mailbox management through the mail service: create, rename, delete. Another user's
 * mailbox is simply not found (404), as everywhere.
 */
async function mailboxAdminRoutes(app) {
  const config = { auth: 'user' };

  app.post('/mailboxes', { config, schema: schemas.create }, async (req, reply) => {
    const be = await app.backendOf(req);
    await app.timed(req, () => be.createMailbox(req.body.name));
    reply.code(201);
    return { name: req.body.name };
  });

  app.patch('/mailboxes/:mailbox', { config, schema: schemas.rename }, async (req) => {
    const be = await app.backendOf(req);
    await app.timed(req, () => be.renameMailbox(req.params.mailbox, req.body.name));
    return { name: req.body.name };
  });

  app.delete('/mailboxes/:mailbox', { config, schema: schemas.remove }, async (req, reply) => {
    const be = await app.backendOf(req);
    await app.timed(req, () => be.deleteMailbox(req.params.mailbox));
    reply.code(204).send();
  });
}

module.exports = mailboxAdminRoutes;
