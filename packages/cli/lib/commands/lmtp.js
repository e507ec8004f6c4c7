'use strict';

const { errors, onShutdown } = require('@mailgate/core');
const { createMailService } = require('@mailgate/service');
const { tlsFromEnv } = require('../tls-env');

/*
 * `mailgate lmtp`, the whole command: the LMTP server alone until SIGTERM/SIGINT, which let
 * deliveries in progress finish (and answer) before the process ends. startLmtp is also how
 * `mailgate serve` starts it beside the HTTP API and IMAP, on the same mail service. Configuration from the environment:
 * LMTP_PORT (default 2424), LMTP_HOST (default HOST, else 127.0.0.1), LMTP_SOCKET (a unix
 * socket path, e.g. in Postfix's queue directory), LMTP_TLS_CERT / LMTP_TLS_KEY (STARTTLS),
 * LMTP_MAX_MESSAGE_BYTES (SIZE, default 50 MiB), LMTP_MAX_RECIPIENTS (per transaction,
 * default 100).
 */

/**
 * LMTP settings from the environment.
 * @param {NodeJS.ProcessEnv} env
 * @param {{host?: string}} config loadConfig() result (HOST is the default host)
 * @returns {{port: number|null, host: string, socket: string|null, tls: object|null, limits: object, wanted: boolean}}
 *   wanted: LMTP_PORT or LMTP_SOCKET is set (what makes `mailgate serve` start LMTP)
 */
function lmtpSettings(env, config) {
  const socket = env.LMTP_SOCKET || null;
  const portSet = env.LMTP_PORT !== undefined && env.LMTP_PORT !== '';
  const port = portSet ? intVar(env, 'LMTP_PORT', 0, 65535) : socket ? null : 2424;
  const host = env.LMTP_HOST || config.host || '127.0.0.1';
  const tls = tlsFromEnv(env, 'LMTP');
  const limits = {};
  if (env.LMTP_MAX_MESSAGE_BYTES) {
    limits.maxMessage = intVar(env, 'LMTP_MAX_MESSAGE_BYTES', 1, Number.MAX_SAFE_INTEGER);
  }
  if (env.LMTP_MAX_RECIPIENTS) {
    limits.maxRecipients = intVar(env, 'LMTP_MAX_RECIPIENTS', 1, 100000);
  }
  return { port, host, socket, tls, limits, wanted: portSet || Boolean(socket) };
}

function intVar(env, name, min, max) {
  const n = Number(env[name]);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new errors.CONFIG_INVALID(`${name} must be an integer ${min}-${max}`);
  }
  return n;
}

/**
 * Starts the LMTP server on a mail service.
 * @param {{service: object, log: import('pino').Logger, env?: NodeJS.ProcessEnv, config: object}} o
 * @returns {Promise<{server: object, addresses: string[]}>}
 */
async function startLmtp(o) {
  const { createLmtpServer } = require('@mailgate/lmtp');
  const s = lmtpSettings(o.env || process.env, o.config);
  const server = createLmtpServer({
    service: o.service,
    logger: o.log.child({ component: 'lmtp' }),
    tls: s.tls,
    limits: s.limits,
  });
  const addresses = [];
  try {
    if (s.port !== null) {
      const a = await server.listen({ port: s.port, host: s.host });
      addresses.push(`lmtp://${a.host}:${a.port}${s.tls ? ' (STARTTLS)' : ''}`);
    }
    if (s.socket) {
      await server.listen({ path: s.socket });
      addresses.push(`unix:${s.socket}`);
    }
  } catch (err) {
    await server.close().catch(() => {});
    if (err && err.code === 'EADDRINUSE') {
      const where = s.socket && !err.port ? [s.socket, 'this host', 'LMTP_SOCKET'] : null;
      throw where
        ? new errors.PORT_IN_USE(...where)
        : new errors.PORT_IN_USE(String(err.port || s.port), s.host, 'LMTP_PORT/LMTP_HOST');
    }
    throw err;
  }
  return { server, addresses };
}

/**
 * Registers `lmtp`.
 * @param {import('commander').Command} program
 * @param {import('../context').CliContext} ctx
 */
function register(program, ctx) {
  program
    .command('lmtp')
    .description(
      'run the LMTP server alone on LMTP_HOST:LMTP_PORT (default 127.0.0.1:2424) and/or the unix socket LMTP_SOCKET until Ctrl-C',
    )
    .action(async () => {
      lmtpSettings(process.env, ctx.config); // configuration errors before the database starts
      const service = await createMailService({ config: ctx.config, logger: ctx.log });
      let lmtp;
      try {
        lmtp = await startLmtp({ service, log: ctx.log, config: ctx.config });
      } catch (err) {
        await service.close();
        throw err;
      }
      process.stderr.write(
        `mailgate LMTP listening on ${lmtp.addresses.join(', ')}; Ctrl-C stops it\n`,
      );
      onShutdown(ctx.log, async () => {
        await lmtp.server.close();
        await service.close();
      });
      await new Promise(() => {});
    });
}

module.exports = { startLmtp, lmtpSettings, register };
