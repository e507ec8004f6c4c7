'use strict';

const schemas = require('../schemas/users');

/** User management with the admin token (MAILGATE_ADMIN_TOKEN). */
async function userRoutes(app) {
  const { store, auth } = app;
  const admin = { auth: 'admin' };

  app.post('/users', { config: admin, schema: schemas.createUser }, async (req, reply) => {
    const passwordHash = await auth.hashPassword(req.body.password);
    const u = await app.timed(req, () => store.createUser(req.body.name, { passwordHash }));
    reply.code(201);
    return { id: u.id, name: u.name };
  });

  app.post(
    '/users/:user/tokens',
    { config: admin, schema: schemas.createToken },
    async (req, reply) => {
      const u = await app.timed(req, () => store.getUser(req.params.user));
      const ttlSeconds = (req.body && req.body.ttlSeconds) || auth.tokenTtlSeconds;
      const t = await app.timed(req, () => store.createToken(u.id, { ttlSeconds, label: 'admin' }));
      reply.code(201);
      return { token: t.token, expiresAt: t.expiresAt };
    },
  );
}

module.exports = userRoutes;
