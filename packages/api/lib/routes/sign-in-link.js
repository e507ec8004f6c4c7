'use strict';

const { errors } = require('@mailgate/core');
const schemas = require('../schemas/sign-in-link');

/*
 * One-time sign-in links: the token of a link is exchanged for a session token and revoked
 * in the same step, so a link that leaked (shell history, a screenshot) after use is worth
 * nothing. Only tokens made for a link (label `link`) are redeemed; the session token it gives
 * cannot be traded again. Users and tokens are reached through the mail service.
 */
async function signInLinkRoutes(app) {
  const users = app.mailService.users;
  app.post(
    '/session/link',
    { config: { auth: 'none' }, schema: schemas.redeem },
    async (req, reply) => {
      const found = await app.timed(req, () => users.findToken(req.body.link));
      // Only a link's own token (label `link`, made for a sign-in link) is redeemed: a session
      // token traded here would renew itself for another lifetime, forever (issue 29.7).
      const isLink = found && found.label === 'link';
      // revokeToken answers false when another request revoked it first: only one wins.
      const won =
        isLink && (await app.timed(req, () => users.revokeToken(found.user, found.tokenId)));
      if (!won) throw new errors.UNAUTHORIZED();
      const t = await app.timed(req, () =>
        users.createToken(found.user, { ttlSeconds: app.auth.tokenTtlSeconds, label: 'session' }),
      );
      reply.code(201);
      return { token: t.token, expiresAt: t.expiresAt };
    },
  );
}

module.exports = signInLinkRoutes;
