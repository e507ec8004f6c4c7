'use strict';

const { errors, checkPassword } = require('@mailgate/core');

/*
 * `mailgate user add`: users of the API and IMAP server; passwords only via the environment.
 * `mailgate user passwd`: set or replace a password (users made by an import have none).
 * `mailgate user route`: a user's IMAP route (store, or proxy while `mailgate migrate` moves them).
 * Every password set here passes core's checkPassword, the rule POST /users applies too.
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
      'create a user (password read from the environment variable named by --password-env; ' +
        'without one, set it later with user passwd)',
    )
    .option('--password-env <VAR>', 'environment variable holding the password (8+ characters)')
    .option('--json', 'print one JSON result object on stdout')
    .action(async (name, o) => {
      const password = o.passwordEnv ? passwordFrom(o.passwordEnv) : undefined;
      const user = await ctx.withService((service) => service.users.create(name, { password }));
      ctx.out(o.json, { id: user.id, name: user.name }, (u) =>
        process.stderr.write(`created user ${u.name}\n`),
      );
    });
  usr
    .command('passwd <name>')
    .description(
      "set or replace an existing user's password, e.g. of a user created by import " +
        '(read from the environment variable named by --password-env)',
    )
    .requiredOption(
      '--password-env <VAR>',
      'environment variable holding the new password (8+ characters)',
    )
    .option('--json', 'print one JSON result object on stdout')
    .action(async (name, o) => {
      const password = passwordFrom(o.passwordEnv);
      const r = await ctx.withService((service) => service.users.setPassword(name, password));
      ctx.out(o.json, { id: r.id, name: r.name, replaced: r.replaced }, (u) =>
        process.stderr.write(`${u.replaced ? 'replaced the' : 'set a'} password for ${u.name}\n`),
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

/**
 * The password in the environment variable named by --password-env, checked against the rule
 * before the database is opened. Only the command line's own mistakes are USAGE.
 * @param {string} variable
 * @returns {string}
 */
function passwordFrom(variable) {
  const password = process.env[variable];
  if (password === undefined || password === '')
    throw new errors.USAGE(`environment variable ${variable} is empty or unset`);
  return checkPassword(password);
}

module.exports = { register };
