'use strict';

const { checkPassword } = require('@mailgate/core');
const schemas = require('../schemas/users');

/** User management with the admin token (MAILGATE_ADMIN_TOKEN), through service.users. */
async function userRoutes(app) {
  const { auth } = app;
  const users = app.mailService.users;
  const admin = { auth: 'admin' };

  app.post('/users', { config: admin, schema: schemas.createUser }, async (req, reply) => {
    const { name, password } = req.body;
    checkPassword(password);
    const u = await app.timed(req, () => users.create(name, { password }));
    reply.code(201);
    return { id: u.id, name: u.name };
  });

  app.post(
    '/users/:user/tokens',
    { config: admin, schema: schemas.createToken },
    async (req, reply) => {
      const ttlSeconds = (req.body && req.body.ttlSeconds) || auth.tokenTtlSeconds;
      const t = await app.timed(req, () =>
        users.createToken(req.params.user, { ttlSeconds, label: 'admin' }),
      );
      reply.code(201);
      return { token: t.token, expiresAt: t.expiresAt };
    },
  );
}

module.exports = userRoutes;
