'use strict';

const { setTimeout: sleep } = require('node:timers/promises');
const { errors } = require('@mailgate/core');
const schemas = require('../schemas/session');

/** Log in (POST /session, password → bearer token) and log out (DELETE /session). */
async function sessionRoutes(app) {
  const { auth } = app;
  const users = app.mailService.users;

  /** Checks the password under the login limiter; the user, or a coded error. */
  const checkLogin = async (req, name, password) => {
    // Reserved before the password is checked (one step); only settled failures refuse.
    const attempt = await auth.limiter.admit(name, req.ip);
    if (!attempt.allowed) {
      const err = new errors.TOO_MANY_ATTEMPTS(attempt.retryAfter);
      err.retryAfter = attempt.retryAfter;
      throw err;
    }
    if (attempt.delayMs) await sleep(attempt.delayMs);
    try {
      const u = await app.timed(req, () => users.verifyLogin(name, password));
      await attempt.succeeded();
      return u;
    } catch (err) {
      // NO_PASSWORD is a failed attempt too: it names the step to take, and the limiter
      // still bounds how fast anyone can learn from it which names exist.
      if (err.code !== 'INVALID_CREDENTIALS' && err.code !== 'NO_PASSWORD') {
        attempt.cancel(); // no answer (database down): not a guess
        throw err;
      }
      // Written before the answer: the guesser's next try, at any process, sees it.
      await attempt.failed();
      req.log.info({ event: 'login-failed' }, 'failed login');
      throw err;
    }
  };

  app.post('/session', { config: { auth: 'none' }, schema: schemas.login }, async (req, reply) => {
    const u = await checkLogin(req, req.body.user, req.body.password);
    const t = await app.timed(req, () =>
      users.createToken(u.name, { ttlSeconds: auth.tokenTtlSeconds, label: 'session' }),
    );
    reply.code(201);
    return { token: t.token, expiresAt: t.expiresAt };
  });

  app.delete(
    '/session',
    { config: { auth: 'user' }, schema: schemas.logout },
    async (req, reply) => {
      await app.timed(req, () => users.revokeToken(req.user.user, req.user.tokenId));
      reply.code(204).send();
    },
  );
}

module.exports = sessionRoutes;
