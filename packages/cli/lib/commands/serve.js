'use strict';

const { serve } = require('../serve');

/*
 * `mailgate serve`: the HTTP API and the IMAP server until SIGTERM/SIGINT.
 */

/**
 * Registers `serve`.
 * @param {import('commander').Command} program
 * @param {import('../context').CliContext} ctx
 */
function register(program, ctx) {
  program
    .command('serve')
    .description(
      'run the webmail HTTP API on HOST:PORT (default 127.0.0.1:3000) and the IMAP server on IMAP_HOST:IMAP_PORT (default 1143) until Ctrl-C',
    )
    .option('--no-imap', 'HTTP only')
    .action(async (o) => {
      await serve(ctx.config, ctx.log, { imap: o.imap });
      // Keeps running: the server's SIGTERM/SIGINT handler shuts down and exits.
      await new Promise(() => {});
    });
}

module.exports = { register };
