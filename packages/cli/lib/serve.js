'use strict';

/*
 * `mailgate serve`, `mailgate token create` and the serving part of `mailgate demo`.
 * Kept apart from main.js so the API wiring stays in one small file.
 */

const { onShutdown } = require('@mailgate/core');

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
 * Creates a bearer token for a user.
 * @param {import('@mailgate/service').MailService} service
 * @param {string} name
 * @param {{ttlDays?: number, label?: 'cli'|'link'}} [opts] label `link`: a sign-in link's token,
 *   the only kind POST /session/link redeems
 */
async function createToken(service, name, opts = {}) {
  const ttlSeconds = opts.ttlDays ? Math.round(opts.ttlDays * 86400) : undefined;
  const t = await service.users.createToken(name, { ttlSeconds, label: opts.label || 'cli' });
  return { user: name, token: t.token, expiresAt: t.expiresAt };
}

/**
 * After the demo import: serves the API and prints a token and curl examples. Only when
 * stdout is a terminal (and not --no-serve): in scripts and tests the demo ends by itself.
 * @returns {Promise<boolean>} true when the server runs (the process stays up until Ctrl-C)
 */
async function serveDemo({ config, log, user, noServe }) {
  if (noServe || !process.stdout.isTTY) {
    process.stdout.write(
      '\nThe webmail page and the HTTP API: run the demo on a terminal (it then serves both and ' +
        `prints a one-time sign-in link), or \`npx mailgate serve\` and open ` +
        `http://${config.host}:${config.port}/ (API token: \`npx mailgate token create ${user}\`)\n`,
    );
    return false;
  }
  const srv = await serve(config, log);
  const t = await createToken(srv.app.mailService, user, { ttlDays: 1 });
  // The page's sign-in link: a token of its own, valid 15 minutes, traded once by the page.
  const link = await createToken(srv.app.mailService, user, {
    ttlDays: 15 / 1440,
    label: 'link',
  });
  const h = `-H 'Authorization: Bearer ${t.token}'`;
  const api = `${srv.url}/api/v1`;
  process.stdout.write(
    `\nThe HTTP API runs on ${srv.url} (OpenAPI UI: ${srv.url}/docs). Token for ${user}: ${t.token}\n` +
      `  curl -s ${h} ${api}/mailboxes\n` +
      `  curl -s ${h} '${api}/mailboxes/INBOX/messages?limit=5&order=-date'\n` +
      `  curl -s ${h} '${api}/search?q=subject:razor%20from:taint.org'\n` +
      `\nWebmail page: ${srv.url}/\n` +
      `One-time sign-in link for ${user} (valid 15 minutes): ${srv.url}/#link=${link.token}\n` +
      'Ctrl-C stops the server.\n',
  );
  return true;
}

module.exports = { serve, createToken, serveDemo };
