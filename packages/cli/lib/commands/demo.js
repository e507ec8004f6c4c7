'use strict';

const { demo } = require('../demo');
const { serveDemo } = require('../serve');

/*
 * `mailgate demo`: the SpamAssassin sample imported, shown, and (on a terminal) served.
 */

/**
 * Registers `demo`.
 * @param {import('commander').Command} program
 * @param {import('../context').CliContext} ctx
 */
function register(program, ctx) {
  const { config, log } = ctx;
  program
    .command('demo')
    .description('import a real sample (SpamAssassin public corpus) and show how to look at it')
    .option('--user <user>', 'demo user', 'demo')
    .option('--no-serve', 'do not start the HTTP API afterwards (it only starts on a terminal)')
    .action(async (o) => {
      await ctx.withService((service) => demo({ service, user: o.user, config, log }));
      await serveDemo({ config, log, user: o.user, noServe: !o.serve });
    });
}

module.exports = { register };
