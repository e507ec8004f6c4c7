'use strict';

const { errors } = require('@mailgate/core');

/*
 * `mailgate user add`: users of the API and IMAP server; passwords only via the environment.
 * `mailgate user route`: a user's IMAP route (store, or proxy while `mailgate migrate` moves them).
 */

/**
 * Registers `user`.
 * @param {import('commander').Command} program
 * @param {import('../context').CliContext} ctx
 */
function register(program, ctx) {
  const usr = program.command('user').description('manage users');
  usr
    .command('add <name>')
    .description(
      'create a user (password read from the environment variable named by --password-env)',
    )
    .option('--password-env <VAR>')
    .option('--json', 'print one JSON result object on stdout')
    .action(async (name, o) => {
      let password;
      if (o.passwordEnv) {
        password = process.env[o.passwordEnv];
        if (!password)
          throw new errors.USAGE(`environment variable ${o.passwordEnv} is empty or unset`);
      }
      const user = await ctx.withService((service) => service.users.create(name, { password }));
      ctx.out(o.json, { id: user.id, name: user.name }, (u) =>
        process.stderr.write(`created user ${u.name}\n`),
      );
    });
  usr
    .command('route <name> [route]')
    .description(
      "show or set the user's IMAP route: store (served by mailgate) or proxy (relayed to the upstream account of legacy add-user while it is being migrated)",
    )
    .option('--json', 'print one JSON result object on stdout')
    .action(async (name, route, o) => {
      if (route !== undefined && route !== 'store' && route !== 'proxy')
        throw new errors.USAGE(`user route: route must be store or proxy, not "${route}"`);
      const r = await ctx.withService(async (service) =>
        route === undefined
          ? { user: name, route: await service.users.route(name) }
          : { user: name, ...(await service.users.setRoute(name, route)) },
      );
      ctx.out(o.json, r, (x) => process.stderr.write(`route of ${x.user}: ${x.route}\n`));
    });
}

module.exports = { register };
