'use strict';

const { errors } = require('@mailgate/core');
const schemas = require('../schemas/session');

/** Log in (POST /session, password → bearer token) and log out (DELETE /session). */
async function sessionRoutes(app) {
  const { store, auth } = app;

  app.post('/session', { config: { auth: 'none' }, schema: schemas.login }, async (req, reply) => {
    const { user: name, password } = req.body;
    const { limiter } = auth;
    const keys = [`ip:${req.ip}`, `ip:${req.ip}|user:${name}`];
    const wait = Math.max(...keys.map((k) => limiter.blockedFor(k)));
    if (wait) {
      const err = new errors.TOO_MANY_ATTEMPTS(wait);
      err.retryAfter = wait;
      throw err;
    }
    const row = await app.timed(req, () =>
      store.knex('users').where({ name }).first('id', 'password_hash'),
    );
    const ok = await auth.verifyLogin(password, row && row.password_hash);
    if (!row || !ok) {
      keys.forEach((k) => limiter.fail(k));
      req.log.info({ event: 'login-failed' }, 'failed login');
      throw new errors.INVALID_CREDENTIALS();
    }
    limiter.clear(keys[1]);
    const t = await app.timed(req, () =>
      store.createToken(row.id, { ttlSeconds: auth.tokenTtlSeconds, label: 'session' }),
    );
    reply.code(201);
    return { token: t.token, expiresAt: t.expiresAt };
  });

  app.delete(
    '/session',
    { config: { auth: 'user' }, schema: schemas.logout },
    async (req, reply) => {
      await app.timed(req, () => store.revokeToken(req.user.userId, req.user.tokenId));
      reply.code(204).send();
    },
  );
}

module.exports = sessionRoutes;
