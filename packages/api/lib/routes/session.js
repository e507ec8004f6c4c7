'use strict';

const { setTimeout: sleep } = require('node:timers/promises');
const { errors } = require('@mailgate/core');
const schemas = require('../schemas/session');

/** Log in (POST /session, password → bearer token) and log out (DELETE /session). */
async function sessionRoutes(app) {
  const { store, auth } = app;

  app.post('/session', { config: { auth: 'none' }, schema: schemas.login }, async (req, reply) => {
    const { user: name, password } = req.body;
    // Counted before the password is checked (one step), refunded only on success.
    const attempt = auth.limiter.attempt(name, req.ip);
    if (!attempt.allowed) {
      const err = new errors.TOO_MANY_ATTEMPTS(attempt.retryAfter);
      err.retryAfter = attempt.retryAfter;
      throw err;
    }
    if (attempt.delayMs) await sleep(attempt.delayMs);
    let row;
    let ok;
    try {
      row = await app.timed(req, () =>
        store.knex('users').where({ name }).first('id', 'password_hash'),
      );
      ok = await auth.verifyLogin(password, row && row.password_hash);
    } catch (err) {
      attempt.cancel();
      throw err;
    }
    if (!row || !ok) {
      attempt.failed();
      req.log.info({ event: 'login-failed' }, 'failed login');
      throw new errors.INVALID_CREDENTIALS();
    }
    attempt.succeeded();
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
