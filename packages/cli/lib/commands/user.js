'use strict';

const { errors } = require('@mailgate/core');

/*
 * `mailgate user add`: users of the API and IMAP server; passwords only via the environment.
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
}

module.exports = { register };
