'use strict';

const { serve } = require('../serve');

/*
 * `mailgate serve`: the HTTP API until SIGTERM/SIGINT.
 */

/**
 * Registers `serve`.
 * @param {import('commander').Command} program
 * @param {import('../context').CliContext} ctx
 */
function register(program, ctx) {
  program
    .command('serve')
    .description('run the webmail HTTP API on HOST:PORT (default 127.0.0.1:3000) until Ctrl-C')
    .action(async () => {
      await serve(ctx.config, ctx.log);
      // Keeps running: the server's SIGTERM/SIGINT handler shuts down and exits.
      await new Promise(() => {});
    });
}

module.exports = { register };
