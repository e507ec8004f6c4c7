'use strict';

const os = require('node:os');
const path = require('node:path');
const { errors } = require('./errors');
const { scryptParams } = require('./passwords');

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * Reads and validates mailgate's configuration from the environment, once.
 * Config comes from environment variables only (see README "Configuration").
 *
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {{home: string, databaseUrl: string|null, elasticsearchUrl: string|null,
 *   adminToken: string|null, port: number, host: string, logLevel: string,
 *   importWorkers: number, batchSize: number, parseTimeMs: number, parseMemoryMb: number,
 *   renderWorkers: number, dbIdleTimeoutMs: number, corsOrigins: string[],
 *   listCacheRows: number, imapBodyCacheMb: number, imapListViewCacheMb: number, imapWarmUp: number, pgPreparedReads: number, scrypt: {n: number, r: number, p: number}, userConcurrency: number,
 *   userQueue: number, userWaitMs: number, maxSubstringTerms: number, maxUids: number,
 *   migrate: {perHost: number, rate: number, retries: number, backoffSeconds: number,
 *   expireSeconds: number}}}
 */
function loadConfig(env = process.env) {
  const problems = [];
  const home = path.resolve(env.MAILGATE_HOME || path.join(os.homedir(), '.mailgate'));
  const databaseUrl = env.DATABASE_URL || null;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push('DATABASE_URL must start with postgres:// or postgresql://');
  }
  const elasticsearchUrl = env.ELASTICSEARCH_URL || null;
  if (elasticsearchUrl && !/^https?:\/\//.test(elasticsearchUrl)) {
    problems.push('ELASTICSEARCH_URL must start with http:// or https://');
  }
  const port = intVar(env, 'PORT', 3000, 0, 65535, problems);
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  }
  const cpus = typeof os.availableParallelism === 'function' ? os.availableParallelism() : 2;
  const importWorkers = intVar(env, 'MAILGATE_IMPORT_WORKERS', Math.max(1, cpus), 0, 64, problems);
  const batchSize = intVar(env, 'MAILGATE_BATCH_SIZE', 250, 1, 100000, problems);
  // Parse budget per message (issue 15.2), for import and for request-time rendering: past
  // it a message is stored raw as 'too-complex' / answered with a coded error. 0 = no limit.
  const parseTimeMs = intVar(env, 'MAILGATE_PARSE_TIME_MS', 2000, 0, 600000, problems);
  const parseMemoryMb = intVar(env, 'MAILGATE_PARSE_MEMORY_MB', 256, 16, 16384, problems);
  const renderWorkers = intVar(env, 'MAILGATE_RENDER_WORKERS', 1, 0, 64, problems);
  // How long an idle database connection is kept (tarn's idleTimeoutMillis).
  const dbIdleTimeoutMs = intVar(env, 'MAILGATE_DB_IDLE_TIMEOUT_MS', 30000, 1, 3600000, problems);
  // Browser origins allowed to call the API from another site (CORS); none by default.
  const corsOrigins = (env.MAILGATE_CORS_ORIGINS || '')
    .split(',')
    .map((o) => o.trim().replace(/\/+$/, ''))
    .filter(Boolean);
  for (const o of corsOrigins) {
    if (o !== '*' && !/^https?:\/\/[^/\s]+$/.test(o)) {
      problems.push(`MAILGATE_CORS_ORIGINS: "${o}" is not an origin (scheme://host[:port]) or *`);
    }
  }
  // Header rows kept in memory over all cached mailboxes (the store's list cache; 0 = off).
  const listCacheRows = intVar(env, 'MAILGATE_LIST_CACHE_ROWS', 100000, 0, 100000000, problems);
  // Message bytes the IMAP server keeps in memory for repeated FETCHes (issue 35.4; imap
  // body-cache.js), MiB over all users; 0 = off.
  const imapBodyCacheMb = intVar(env, 'MAILGATE_IMAP_BODY_CACHE_MB', 64, 0, 65536, problems);
  const imapListViewCacheMb = intVar(
    env,
    'MAILGATE_IMAP_LIST_VIEW_CACHE_MB',
    64,
    0,
    65536,
    problems,
  );
  // A new IMAP server process runs its list-view and ENVELOPE paths over a synthetic in-memory
  // mailbox before it listens (issue 35.3; imap warm-up.js); 0 = off.
  const imapWarmUp = intVar(env, 'MAILGATE_IMAP_WARM_UP', 1, 0, 1, problems);
  // Hot reads (IMAP FETCH's read of message bytes) as prepared statements with kept generic
  // plans, on a pool of their own (issue 35.4; store prepared-reads.js); 0 = off.
  const pgPreparedReads = intVar(env, 'MAILGATE_PG_PREPARED_READS', 1, 0, 1, problems);
  // How long a write to a legacy mbox waits for another writer's locks (issue 16): below the
  // HTTP request timeout, so the client gets MAILBOX_LOCKED rather than a dropped request.
  const mboxLockWaitMs = intVar(env, 'MAILGATE_MBOX_LOCK_WAIT_MS', 10000, 1, 600000, problems);
  // Password hashing parameters (passwords.js): checked here too, so a bad value stops the
  // process at start rather than at its first password change.
  let scrypt = null;
  try {
    scrypt = scryptParams(env);
  } catch (err) {
    problems.push(err.message.replace(/^[^:]*: /, ''));
  }
  // Per-user share of the work (issue 29.4; service user-gate.js): operations of one user
  // running at once (HTTP and IMAP together), how many more may wait and for how long, and
  // the per-request cost limits every backend shares.
  const userConcurrency = intVar(env, 'MAILGATE_USER_CONCURRENCY', 4, 1, 1000, problems);
  const userQueue = intVar(env, 'MAILGATE_USER_QUEUE', 64, 0, 100000, problems);
  const userWaitMs = intVar(env, 'MAILGATE_USER_WAIT_MS', 20000, 1, 600000, problems);
  const maxSubstringTerms = intVar(env, 'MAILGATE_MAX_SUBSTRING_TERMS', 32, 1, 10000, problems);
  const maxUids = intVar(env, 'MAILGATE_MAX_UIDS', 100000, 1, 100000000, problems);
  // A whole-server migration (issue 33; service fleet.js): accounts of one upstream host
  // migrated at once, messages/s from one upstream host (all workers together; 0 = no cap),
  // upstream errors in a row before an account fails, the first back-off (doubling), and how
  // long a job may stay claimed before another worker takes it (a killed worker's job).
  const migrate = {
    perHost: intVar(env, 'MAILGATE_MIGRATE_PER_HOST', 4, 1, 10000, problems),
    rate: intVar(env, 'MAILGATE_MIGRATE_RATE', 0, 0, 10000000, problems),
    retries: intVar(env, 'MAILGATE_MIGRATE_RETRIES', 5, 1, 100, problems),
    backoffSeconds: intVar(env, 'MAILGATE_MIGRATE_BACKOFF', 10, 1, 3600, problems),
    expireSeconds: intVar(env, 'MAILGATE_MIGRATE_EXPIRE', 3600, 5, 82800, problems),
  };
  if (problems.length) {
    throw new errors.CONFIG_INVALID(problems.join('; '));
  }
  return {
    home,
    databaseUrl,
    elasticsearchUrl,
    adminToken: env.MAILGATE_ADMIN_TOKEN || null,
    port,
    host: env.HOST || '127.0.0.1',
    logLevel,
    importWorkers,
    batchSize,
    parseTimeMs,
    parseMemoryMb,
    renderWorkers,
    listCacheRows,
    imapBodyCacheMb,
    imapListViewCacheMb,
    imapWarmUp,
    pgPreparedReads,
    mboxLockWaitMs,
    dbIdleTimeoutMs,
    userConcurrency,
    userQueue,
    userWaitMs,
    maxSubstringTerms,
    maxUids,
    corsOrigins,
    scrypt,
    migrate,
  };
}

function intVar(env, name, dflt, min, max, problems) {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    problems.push(`${name} must be an integer between ${min} and ${max} (got "${raw}")`);
    return dflt;
  }
  return n;
}

module.exports = { loadConfig };
