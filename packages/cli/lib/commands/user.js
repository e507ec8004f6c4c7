'use strict';

const { errors, checkPassword } = require('@mailgate/core');
const { printTable } = require('../format');

/*
 * `mailgate user add`: users of the API and IMAP server; passwords only via the environment.
 * `mailgate user passwd`: set or replace a password (users made by an import have none); the
 * user's API tokens are revoked in the same step and open IMAP sessions end.
 * `mailgate user list`: every user, with password set or not, route and counts.
 * `mailgate user delete NAME --yes`: the user and all their mail (the flag is the confirmation).
 * `mailgate user route`: a user's IMAP route (store, or proxy while `mailgate migrate` moves them).
 * Every password set here passes core's checkPassword, the rule POST /users applies too.
 */

// Commands on existing users never create the embedded database: NO_DATABASE instead.
const READ_ONLY = { readOnly: true };

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
      const r = await ctx.withService(
        (service) => service.users.setPassword(name, password),
        READ_ONLY,
      );
      const result = {
        id: r.id,
        name: r.name,
        replaced: r.replaced,
        revokedTokens: r.revokedTokens,
      };
      ctx.out(o.json, result, (u) =>
        process.stderr.write(
          `${u.replaced ? 'replaced the' : 'set a'} password for ${u.name}` +
            (u.revokedTokens ? `; revoked ${u.revokedTokens} API tokens` : '') +
            '\n',
        ),
      );
    });
  usr
    .command('list')
    .description('list users: password set, IMAP route, mailboxes, messages, live API tokens')
    .option('--json', 'print one JSON result object on stdout')
    .action(async (o) => {
      const users = await ctx.withService((service) => service.users.list(), READ_ONLY);
      ctx.out(o.json, { users }, (x) =>
        printTable(
          x.users.map((u) => ({ ...u, password: u.hasPassword ? 'yes' : 'NO (user passwd)' })),
          ['name', 'password', 'route', 'mailboxes', 'messages', 'tokens'],
        ),
      );
    });
  usr
    .command('delete <name>')
    .description('delete a user with all their mail, tokens and import jobs (needs --yes)')
    .option('--yes', 'confirm: the mail is gone afterwards (export it first to keep it)')
    .option('--json', 'print one JSON result object on stdout')
    .action(async (name, o) => {
      if (!o.yes) {
        throw new errors.USAGE(
          `user delete removes ${name} and all their mail: add --yes to confirm ` +
            '(export it first to keep a copy)',
        );
      }
      const r = await ctx.withService((service) => service.users.remove(name), READ_ONLY);
      ctx.out(o.json, r, (x) =>
        process.stderr.write(
          `deleted user ${x.name} (${x.messages} messages in ${x.mailboxes} mailboxes)\n`,
        ),
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
