'use strict';

const { onShutdown } = require('@mailgate/core');

/*
 * `mailgate serve`, the whole command: the HTTP API, the IMAP server and (LMTP_PORT/LMTP_SOCKET
 * set) the LMTP server until SIGTERM/SIGINT. serve() is also the serving part of `mailgate
 * demo`.
 */

/**
 * Runs the HTTP API until SIGTERM/SIGINT (graceful shutdown is in @mailgate/api's server).
 * With `imap`, the IMAP server runs beside it on the API's mail service and failed-login
 * limiter, and shutdown says `* BYE` to IMAP sessions before the API closes; with `lmtp` and
 * LMTP_PORT or LMTP_SOCKET set, the LMTP server too (its deliveries finish first).
 * @param {object} config loadConfig() result
 * @param {import('pino').Logger} log
 * @param {{imap?: boolean, lmtp?: boolean}} [opts]
 * @returns {Promise<{url: string, app: object, close: () => Promise<void>}>}
 */
async function serve(config, log, opts = {}) {
  const { startServer } = require('@mailgate/api');
  const { lmtpSettings } = require('./lmtp');
  // LMTP runs inside `serve` only when LMTP_PORT or LMTP_SOCKET is set.
  const withLmtp = Boolean(opts.lmtp) && lmtpSettings(process.env, config).wanted;
  const srv = await startServer(config, { log, signals: !opts.imap && !withLmtp });
  process.stderr.write(
    `mailgate API listening on ${srv.url} (OpenAPI: ${srv.url}/docs); Ctrl-C stops it\n`,
  );
  if (!opts.imap && !withLmtp) return srv;
  const servers = [];
  try {
    if (opts.imap) {
      const { startImap } = require('./imap');
      const imap = await startImap({
        service: srv.app.mailService,
        limiter: srv.app.auth.limiter,
        log,
        config,
      });
      servers.push({ name: 'imap', ...imap });
      process.stderr.write(`mailgate IMAP listening on ${imap.addresses.join(', ')}\n`);
    }
    if (withLmtp) {
      const { startLmtp } = require('./lmtp');
      const lmtp = await startLmtp({ service: srv.app.mailService, log, config });
      servers.push({ name: 'lmtp', ...lmtp });
      process.stderr.write(`mailgate LMTP listening on ${lmtp.addresses.join(', ')}\n`);
    }
  } catch (err) {
    for (const x of servers) await x.server.close();
    await srv.close();
    throw err;
  }
  const close = async () => {
    // LMTP first: deliveries in progress finish and are answered before the database goes.
    for (const x of [...servers].reverse()) await x.server.close();
    await srv.close();
  };
  onShutdown(log, close);
  const by = (name) => (servers.find((x) => x.name === name) || {}).server;
  return { ...srv, imap: by('imap'), lmtp: by('lmtp'), close };
}

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

module.exports = { serve, register };
