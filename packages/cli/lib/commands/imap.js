'use strict';

const { errors, LoginLimiter, onShutdown } = require('@mailgate/core');
const { createMailService } = require('@mailgate/service');
const { tlsFromEnv } = require('../tls-env');

/*
 * `mailgate imap`, the whole command: the IMAP server alone (no HTTP) until SIGTERM/SIGINT,
 * which say `* BYE` to every session before the process ends. startImap is also how
 * `mailgate serve` starts it beside the HTTP API (sharing its mail service and failed-login
 * limiter). Configuration from the
 * environment: IMAP_PORT (default 1143), IMAP_HOST (default HOST, else 127.0.0.1),
 * IMAP_TLS_CERT / IMAP_TLS_KEY (PEM files: STARTTLS, and implicit TLS on IMAP_TLS_PORT when set),
 * and the abuse limits of LIMIT_VARS.
 * Also the background migration of `mailgate migrate --on-login` (migrateOnLogin).
 */

/**
 * IMAP settings from the environment.
 * @param {NodeJS.ProcessEnv} env
 * @param {{host: string}} config loadConfig() result (HOST is the default host)
 */
function imapSettings(env, config) {
  const port = portVar(env, 'IMAP_PORT', 1143);
  const tlsPort = env.IMAP_TLS_PORT ? portVar(env, 'IMAP_TLS_PORT', 0) : null;
  const host = env.IMAP_HOST || config.host || '127.0.0.1';
  const tls = tlsFromEnv(env, 'IMAP');
  if (tlsPort !== null && !tls) {
    throw new errors.CONFIG_INVALID('IMAP_TLS_PORT needs IMAP_TLS_CERT and IMAP_TLS_KEY');
  }
  const idlePollMs = env.IMAP_IDLE_POLL_MS ? portVar(env, 'IMAP_IDLE_POLL_MS', 2000) : undefined;
  const limits = {};
  for (const [name, key] of Object.entries(LIMIT_VARS)) {
    const v = env[name];
    if (v === undefined || v === '') continue;
    const n = Number(v);
    if (!Number.isSafeInteger(n) || n < 1) {
      throw new errors.CONFIG_INVALID(`${name} must be a positive integer`);
    }
    limits[key] = n;
  }
  if (idlePollMs) limits.idlePollMs = idlePollMs;
  return { port, host, tls, tlsPort, idlePollMs, limits };
}

// The IMAP server's abuse limits an operator may tune (packages/imap/lib/server.js DEFAULTS;
// root README "Security").
const LIMIT_VARS = {
  IMAP_MAX_CONNECTIONS: 'maxConnections',
  IMAP_MAX_PREAUTH_CONNECTIONS: 'maxPreauthConnections',
  IMAP_MAX_CONNECTIONS_PER_ADDRESS: 'maxConnectionsPerAddress',
  IMAP_MAX_CONNECTIONS_PER_USER: 'maxConnectionsPerUser',
  IMAP_PREAUTH_TIMEOUT_MS: 'preauthTimeout',
  IMAP_PREAUTH_MAX_BYTES: 'preauthMaxBytes',
  IMAP_PREAUTH_MAX_LITERAL: 'preauthMaxLiteral',
  IMAP_MAX_UNSENT_BYTES: 'maxUnsentBytes',
  IMAP_OUTPUT_STALL_TIMEOUT_MS: 'outputStallTimeout',
};

function portVar(env, name, dflt) {
  const n = Number(env[name]);
  if (env[name] === undefined || env[name] === '') return dflt;
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw new errors.CONFIG_INVALID(`${name} must be an integer 0-65535`);
  }
  return n;
}

/**
 * Starts the IMAP server on a mail service.
 * @param {{service: object, limiter?: object, log: import('pino').Logger, env?: NodeJS.ProcessEnv, config: object}} o
 * @returns {Promise<{server: object, addresses: string[]}>}
 */
async function startImap(o) {
  const { createImapServer } = require('@mailgate/imap');
  const s = imapSettings(o.env || process.env, o.config);
  const server = createImapServer({
    service: o.service,
    limiter: o.limiter,
    logger: o.log.child({ component: 'imap' }),
    tls: s.tls,
    limits: s.limits,
    // MAILGATE_IMAP_BODY_CACHE_MB, validated with the rest of the configuration at start.
    bodyCache:
      o.config && o.config.imapBodyCacheMb != null
        ? { maxBytes: o.config.imapBodyCacheMb * 1024 * 1024 }
        : undefined,
    // MAILGATE_IMAP_LIST_VIEW_CACHE_MB, the same way.
    listViewCache:
      o.config && o.config.imapListViewCacheMb != null
        ? { maxBytes: o.config.imapListViewCacheMb * 1024 * 1024 }
        : undefined,
    onProxiedLogin: migrateOnLogin(o),
  });
  const addresses = [];
  // The variables that move the listener being started: PORT_IN_USE names them, so that the
  // operator is not sent to the HTTP API's PORT/HOST.
  let vars = 'IMAP_PORT/IMAP_HOST';
  try {
    const a = await server.listen({ port: s.port, host: s.host });
    addresses.push(`imap://${a.host}:${a.port}${s.tls ? ' (STARTTLS)' : ''}`);
    if (s.tlsPort !== null) {
      vars = 'IMAP_TLS_PORT/IMAP_HOST';
      const b = await server.listen({ port: s.tlsPort, host: s.host, implicitTls: true });
      addresses.push(`imaps://${b.host}:${b.port}`);
    }
  } catch (err) {
    await server.close().catch(() => {});
    if (err && err.code === 'EADDRINUSE') {
      throw new errors.PORT_IN_USE(String(err.port || s.port), s.host, vars);
    }
    throw err;
  }
  return { server, addresses };
}

/**
 * The hook of `mailgate migrate U --on-login`: at a proxied login of a user whose flag is set,
 * this process takes the flag and runs the migration in the background (import, verify,
 * cutover; the service's transfer.migrateAccount). The outcome is logged; a failed migration arms
 * the flag again so that a later login retries. The relayed session is closed at cutover like
 * any other.
 * @param {{service: object, log: import('pino').Logger, config: object}} o
 * @returns {(user: string) => void}
 */
function migrateOnLogin(o) {
  const running = new Set();
  const log = o.log.child({ component: 'migrate' });
  const run = async (user) => {
    if (!(await o.service.users.claimMigrateOnLogin(user))) return;
    log.info({ user }, 'migration started at login');
    let ok = false;
    try {
      const r = await o.service.transfer.migrateAccount({
        user,
        imap: o.service.upstreamAccount(user),
        workers: o.config.importWorkers,
        batchSize: o.config.batchSize,
        progress: false,
        log,
      });
      ok = r.cutover;
      if (!ok) log.warn({ user, verify: r.verify }, 'migration at login did not verify');
    } finally {
      if (!ok) await o.service.users.setMigrateOnLogin(user, true);
    }
  };
  return (user) => {
    if (running.has(user)) return;
    running.add(user);
    run(user)
      .catch((err) => log.error({ user, err: err.message, code: err.code }, 'migration failed'))
      .finally(() => running.delete(user));
  };
}

/**
 * Registers `imap`.
 * @param {import('commander').Command} program
 * @param {import('../context').CliContext} ctx
 */
function register(program, ctx) {
  program
    .command('imap')
    .description(
      'run the IMAP server alone on IMAP_HOST:IMAP_PORT (default 127.0.0.1:1143) until Ctrl-C',
    )
    .action(async () => {
      imapSettings(process.env, ctx.config); // configuration errors before the database starts
      const service = await createMailService({ config: ctx.config, logger: ctx.log });
      let imap;
      try {
        imap = await startImap({
          service,
          limiter: new LoginLimiter({ shared: service.users.loginFailures }),
          log: ctx.log,
          config: ctx.config,
        });
      } catch (err) {
        await service.close();
        throw err;
      }
      process.stderr.write(
        `mailgate IMAP listening on ${imap.addresses.join(', ')}; Ctrl-C stops it\n`,
      );
      onShutdown(ctx.log, async () => {
        await imap.server.close();
        await service.close();
      });
      await new Promise(() => {});
    });
}

module.exports = { startImap, imapSettings, register };
