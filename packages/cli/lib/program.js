'use strict';

const { Command } = require('commander');

/*
 * The command tree: one module per command under commands/, each registering itself. The
 * order here is the order of `mailgate --help`.
 */
const COMMANDS = [
  'import',
  'export',
  'verify',
  'ls',
  'search',
  'legacy',
  'quarantine',
  'user',
  'db',
  'demo',
  'es',
  'serve',
  'imap',
  'lmtp',
  'deliver',
  'migrate',
  'token',
  'bench',
];

/**
 * Builds the commander program with every command registered.
 * @param {import('./context').CliContext} ctx
 * @returns {Command}
 */
function buildProgram(ctx) {
  const program = new Command('mailgate')
    .description('Move legacy mail (mbox, Maildir, MH) into PostgreSQL and serve it fast.')
    .version(require('../package.json').version)
    .exitOverride()
    // Usage errors are printed by the one error path (failure.js) as `USAGE: message`.
    .configureOutput({ outputError: () => {} })
    .addHelpText(
      'after',
      `
Environment: MAILGATE_HOME (default ~/.mailgate), DATABASE_URL (external PostgreSQL instead of
the embedded one), ELASTICSEARCH_URL (enables the search mirror), MAILGATE_ES_PREFIX,
MAILGATE_ADMIN_TOKEN, MAILGATE_CORS_ORIGINS, PORT, HOST, IMAP_PORT, IMAP_HOST, IMAP_TLS_CERT,
IMAP_TLS_KEY, IMAP_TLS_PORT, IMAP_IDLE_POLL_MS, IMAP_MAX_CONNECTIONS, IMAP_MAX_PREAUTH_CONNECTIONS,
IMAP_MAX_CONNECTIONS_PER_ADDRESS, IMAP_MAX_CONNECTIONS_PER_USER, IMAP_PREAUTH_TIMEOUT_MS,
IMAP_PREAUTH_MAX_BYTES, IMAP_PREAUTH_MAX_LITERAL, IMAP_MAX_UNSENT_BYTES,
IMAP_OUTPUT_STALL_TIMEOUT_MS, LMTP_PORT, LMTP_HOST, LMTP_SOCKET,
LMTP_TLS_CERT, LMTP_TLS_KEY, LMTP_MAX_MESSAGE_BYTES, LMTP_MAX_RECIPIENTS, MAILGATE_ADDRESS_MAP,
LOG_LEVEL, MAILGATE_IMPORT_WORKERS,
MAILGATE_BATCH_SIZE, MAILGATE_PARSE_TIME_MS, MAILGATE_PARSE_MEMORY_MB, MAILGATE_RENDER_WORKERS,
MAILGATE_DB_IDLE_TIMEOUT_MS, MAILGATE_LIST_CACHE_ROWS, MAILGATE_IMAP_BODY_CACHE_MB,
MAILGATE_IMAP_LIST_VIEW_CACHE_MB, MAILGATE_PG_PREPARED_READS,
MAILGATE_MBOX_LOCK_WAIT_MS,
MAILGATE_MIGRATE_PER_HOST, MAILGATE_MIGRATE_RATE, MAILGATE_MIGRATE_RETRIES,
MAILGATE_MIGRATE_BACKOFF, MAILGATE_MIGRATE_EXPIRE
(README "Configuration").
Errors: \`CODE: message\` on stderr (with --json also {"error":{"code","message"}} on stdout).
Exit codes: 0 ok, 1 failure, 2 bad usage or bad query.`,
    );
  for (const name of COMMANDS) require(`./commands/${name}`).register(program, ctx);
  return program;
}

module.exports = { buildProgram, COMMANDS };
