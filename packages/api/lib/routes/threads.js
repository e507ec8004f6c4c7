'use strict';

const schemas = require('../schemas/threads');

/* Threads through the mail service: the list, and one thread's messages (404 for others'). */
async function threadRoutes(app) {
  const config = { auth: 'user' };

  app.get('/threads', { config, schema: schemas.list }, async (req) => {
    const { mailbox, limit, cursor } = req.query;
    const be = await app.backendOf(req);
    return app.timed(req, () => be.listThreads({ mailbox, limit, cursor }));
  });

  app.get('/threads/:thread', { config, schema: schemas.messages }, async (req) => {
    const be = await app.backendOf(req);
    const messages = await app.timed(req, () => be.threadMessages(req.params.thread));
    return { threadId: req.params.thread, messages };
  });
}

module.exports = threadRoutes;
