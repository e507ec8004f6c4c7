'use strict';

const crypto = require('node:crypto');
const fp = require('fastify-plugin');
const { errors, LoginLimiter } = require('@mailgate/core');

/*
 * Cross-cutting: authentication. Every route says what it needs in `config.auth` ('user',
 * 'admin' or 'none'); this plugin's onRequest hook enforces it before any handler runs and
 * sets `req.user` ({userId, user, tokenId} or {admin: true}). Also owns what logins need:
 * the failed-login limiter and the token lifetime (`app.auth`). Users, passwords and tokens
 * are the mail service's (`service.users`).
 */

function sha256(s) {
  return crypto.createHash('sha256').update(String(s)).digest();
}

function bearer(req) {
  const h = req.headers.authorization;
  if (typeof h !== 'string') return null;
  const m = /^Bearer\s+(\S{1,512})\s*$/i.exec(h);
  return m ? m[1] : null;
}

// build()'s loginLimit: {max, windowMs} (max: failures per user + address) or LoginLimiter
// options.
function limiterOptions(o) {
  if (!o) return {};
  const { max, ...rest } = o;
  return max ? { userAddressMax: max, ...rest } : rest;
}

/**
 * @param {import('fastify').FastifyInstance} app
 * @param {{adminToken?: string|null, tokenTtlSeconds?: number, loginLimit?: object,
 *   loginLimiter?: LoginLimiter}} opts loginLimiter: one shared with the IMAP server;
 *   loginLimit: options of a new one (`max` = failures per user and address)
 */
async function authPlugin(app, opts) {
  const adminHash = opts.adminToken ? sha256(opts.adminToken) : null;
  const users = app.mailService.users;
  app.decorateRequest('user', null);
  app.decorate('auth', {
    limiter:
      opts.loginLimiter ||
      new LoginLimiter({
        ...limiterOptions(opts.loginLimit),
        // Counts every process on the database shares (issue 34.4).
        shared: users && users.loginFailures,
        onSharedError: (err) =>
          app.log.warn({ err: { message: err.message } }, 'shared login counts unavailable'),
      }),
    tokenTtlSeconds: opts.tokenTtlSeconds || 30 * 24 * 3600,
  });

  const isAdmin = (token) =>
    Boolean(token && adminHash && crypto.timingSafeEqual(sha256(token), adminHash));

  app.addHook('onRequest', async (req) => {
    const need = req.routeOptions.config && req.routeOptions.config.auth;
    if (!need || need === 'none') return;
    const token = bearer(req);
    if (need === 'admin') {
      if (isAdmin(token)) {
        req.user = { admin: true };
        return;
      }
      if (token && (await users.findToken(token))) {
        throw new errors.FORBIDDEN('This route needs the admin token (MAILGATE_ADMIN_TOKEN)');
      }
      throw new errors.UNAUTHORIZED();
    }
    const found = token ? await users.findToken(token) : null;
    if (!found) throw new errors.UNAUTHORIZED();
    req.user = found;
  });
}

module.exports = fp(authPlugin, {
  name: 'mailgate-auth',
  fastify: '5.x',
  dependencies: ['mailgate-errors', 'mailgate-mail'],
});
