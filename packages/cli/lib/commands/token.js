'use strict';

const { positiveInt } = require('../context');

/*
 * `mailgate token create`: API bearer tokens (printed once, stored hashed).
 * `mailgate token revoke --user U`: every live token of a user, at once.
 */

/**
 * Creates a bearer token for a user.
 * @param {import('@mailgate/service').MailService} service
 * @param {string} name
 * @param {{ttlDays?: number, label?: 'cli'|'link'}} [opts] label `link`: a sign-in link's token,
 *   the only kind POST /session/link redeems
 */
async function createToken(service, name, opts = {}) {
  const ttlSeconds = opts.ttlDays ? Math.round(opts.ttlDays * 86400) : undefined;
  const t = await service.users.createToken(name, { ttlSeconds, label: opts.label || 'cli' });
  return { user: name, token: t.token, expiresAt: t.expiresAt };
}

/**
 * Registers `token`.
 * @param {import('commander').Command} program
 * @param {import('../context').CliContext} ctx
 */
function register(program, ctx) {
  const tok = program.command('token').description('API bearer tokens');
  tok
    .command('create <user>')
    .description('create a bearer token for a user (printed once; stored hashed)')
    .option('--ttl-days <n>', 'lifetime in days (default 30)', positiveInt('--ttl-days'))
    .option('--json', 'print one JSON result object on stdout')
    .action(async (name, o) => {
      const t = await ctx.withService(
        (service) => createToken(service, name, { ttlDays: o.ttlDays }),
        { readOnly: true },
      );
      ctx.out(o.json, t, (x) => process.stdout.write(`${x.token}\n`));
    });
  tok
    .command('revoke')
    .description("revoke every live token of a user (sessions of the web page and the API's)")
    .requiredOption('--user <user>', 'mailgate user name')
    .option('--json', 'print one JSON result object on stdout')
    .action(async (o) => {
      const revoked = await ctx.withService((service) => service.users.revokeAllTokens(o.user), {
        readOnly: true,
      });
      ctx.out(o.json, { user: o.user, revoked }, (x) =>
        process.stderr.write(`revoked ${x.revoked} tokens of ${x.user}\n`),
      );
    });
}

module.exports = { createToken, register };
