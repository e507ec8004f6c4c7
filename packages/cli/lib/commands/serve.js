'use strict';

const { serve } = require('../serve');

/*
 * `mailgate serve`: the HTTP API, the IMAP server and (LMTP_PORT/LMTP_SOCKET set) the LMTP
 * server until SIGTERM/SIGINT.
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
      'run the webmail HTTP API on HOST:PORT (default 127.0.0.1:3000), the IMAP server on IMAP_HOST:IMAP_PORT (default 1143) and, when LMTP_PORT or LMTP_SOCKET is set, the LMTP server until Ctrl-C',
    )
    .option('--no-imap', 'without the IMAP server')
    .action(async (o) => {
      await serve(ctx.config, ctx.log, { imap: o.imap, lmtp: true });
      // Keeps running: the server's SIGTERM/SIGINT handler shuts down and exits.
      await new Promise(() => {});
    });
}

module.exports = { register };
