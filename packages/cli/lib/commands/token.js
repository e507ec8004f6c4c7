'use strict';

const { createToken } = require('../serve');
const { positiveInt } = require('../context');

/*
 * `mailgate token create`: API bearer tokens (printed once, stored hashed).
 */

/**
 * Registers `token`.
 * @param {import('commander').Command} program
 * @param {import('../context').CliContext} ctx
 */
function register(program, ctx) {
  program
    .command('token')
    .description('API bearer tokens')
    .command('create <user>')
    .description('create a bearer token for a user (printed once; stored hashed)')
    .option('--ttl-days <n>', 'lifetime in days (default 30)', positiveInt('--ttl-days'))
    .option('--json', 'print one JSON result object on stdout')
    .action(async (name, o) => {
      const t = await ctx.withService((service) =>
        createToken(service, name, { ttlDays: o.ttlDays }),
      );
      ctx.out(o.json, t, (x) => process.stdout.write(`${x.token}\n`));
    });
}

module.exports = { register };
