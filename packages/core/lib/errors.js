'use strict';

const createError = require('@fastify/error');

/*
 * The one catalogue of coded errors. The CLI prints `code: message`; the API (later) maps
 * statusCode straight to HTTP. Messages are written for users: they name the file, mailbox
 * or message and what is wrong, never internal state.
 */
const defs = {
  CONFIG_INVALID: ['Invalid configuration: %s', 500],
  USAGE: ['%s', 400],
  USER_NOT_FOUND: ['No such user: %s', 404],
  USER_EXISTS: ['User already exists: %s', 409],
  MAILBOX_NOT_FOUND: ['No such mailbox: %s', 404],
  MAILBOX_EXISTS: ['Mailbox already exists: %s', 409],
  // core mailbox-name.js: `.`/`..` path segments, control characters, empty or too long.
  INVALID_MAILBOX_NAME: ['Invalid mailbox name "%s": %s', 400],
  SOURCE_NOT_FOUND: ['Cannot read source %s: %s', 400],
  // An export's --out: a missing parent folder, a file where a folder must be, no permission.
  OUTPUT_NOT_WRITABLE: ['Cannot write %s: %s', 400],
  // An export never writes over an existing file or into a non-empty folder unless --force.
  OUTPUT_EXISTS: [
    '%s already exists%s; choose another --out or pass --force to write over it',
    400,
  ],
  // Not even with --force: the export would overwrite the mail it was imported from.
  OUTPUT_IS_SOURCE: [
    'Will not write %s: it is or holds %s, imported into this store; choose another --out',
    400,
  ],
  // An export path that would resolve outside --out (a mailbox name planted in the store).
  OUTPUT_OUTSIDE: ['Mailbox %s would be written outside %s; the export was refused', 400],
  // The password rule of @mailgate/core passwords.js (checkPassword), for every door that sets one.
  INVALID_PASSWORD: ['Password not accepted: %s', 400],
  // @mailgate/query's QueryError message already reads "Invalid query: … at position N".
  INVALID_QUERY: ['%s', 400],
  DB_UNAVAILABLE: ['Database unavailable: %s', 503],
  // A read-only command without a database: it never creates one (issue 30.4).
  NO_DATABASE: [
    'no mailgate database at %s; set MAILGATE_HOME or DATABASE_URL, or run an import',
    404,
  ],
  EMBEDDED_PG_FAILED: ['Embedded PostgreSQL failed: %s', 500],
  VERIFY_FAILED: ['Verification failed: %s', 500],
  // A warning, not a failure: an import whose source holds no mail (report.warnings).
  NO_MAIL_FOUND: ['No mail found in %s%s', 422],
  // Imports of one source take turns (a lock per import job): the notice of the run that
  // waits (a warning, report.warnings), and the failure of a batch that met rows another
  // import had just written into the same mailbox (nothing of that batch is kept).
  IMPORT_WAITING: [
    'Another import of %s for user %s is running; waiting for it to finish, then checking what is left',
    409,
  ],
  IMPORT_CONFLICT: [
    'Another import wrote the same messages into %s at the same time; run this import again to finish it',
    409,
  ],
  // Serving (`mailgate serve`, `mailgate imap`, `mailgate demo`). The last argument names the
  // variables that move the listener that failed: the HTTP API's unless the IMAP server's are
  // given, so that the hint never sends the operator to the wrong setting.
  PORT_IN_USE: [
    'Port %s on %s is already in use (set %s or stop the other server)',
    500,
    ['PORT/HOST'],
  ],
  // HTTP API
  UNAUTHORIZED: ['Missing, invalid or expired bearer token', 401],
  INVALID_CREDENTIALS: ['Wrong user name or password', 401],
  // A user an import created: no password can be right (README "Security": why this says so).
  NO_PASSWORD: ['user has no password: set one with mailgate user passwd %s', 401],
  FORBIDDEN: ['%s', 403],
  NOT_FOUND: ['No such route: %s', 404],
  MESSAGE_NOT_FOUND: ['No such message: uid %s', 404],
  THREAD_NOT_FOUND: ['No such thread: %s', 404],
  QUARANTINE_NOT_FOUND: ['No such quarantine entry: %s', 404],
  ATTACHMENT_NOT_FOUND: ['No such part: %s', 404],
  // A message over the request-time parse budget (MAILGATE_PARSE_TIME_MS/_MEMORY_MB), or not
  // a message at all (legacy folders): its raw bytes can still be downloaded.
  MESSAGE_NOT_RENDERABLE: ['Message uid %s cannot be shown (%s); download it raw instead', 422],
  INVALID_INPUT: ['%s', 400],
  INVALID_CURSOR: ['Invalid cursor: %s', 400],
  BACKEND_UNAVAILABLE: ['Backend "%s" is not available on this server yet (use backend=pg)', 400],
  // @mailgate/service: the backend cannot do this by nature (a file has no subscriptions,
  // no modseq): 501 Not Implemented, never a silent fallback to another backend.
  UNSUPPORTED_OPERATION: ['Backend "%s" does not support %s', 501],
  TOO_MANY_ATTEMPTS: ['Too many failed logins; retry in %s seconds', 429],
  PAYLOAD_TOO_LARGE: ['%s', 413],
  UNSUPPORTED_MEDIA_TYPE: ['%s', 415],
  BACKEND_TIMEOUT: ['The backend did not answer in time', 503],
  INTERNAL: ['Internal server error', 500],
  // A query-string or path parameter that is not what the route takes (strict integers).
  INVALID_PARAMETER: ['%s', 400],
  REQUEST_TIMEOUT: ['The request was not received in time', 408],
  HEADERS_TOO_LARGE: ['Request header fields (or the URL) too large', 431],
  // NDJSON streams: per-user and server-wide caps keep the database pool for everyone else.
  TOO_MANY_STREAMS: ['Too many open streams for this user (at most %s); retry later', 429],
  SERVER_BUSY: ['Too many open streams on the server; retry shortly', 503],
  // The per-user share of the database pool (service user-gate.js, issue 29.4): one user's
  // heavy work waits in that user's own queue; past its bound the user is told to slow down.
  USER_BUSY: [
    'Too many requests of this user at once (at most %s run together); retry shortly',
    429,
  ],
  // A search or an operation over the per-request cost limits (substring terms, uids).
  QUERY_TOO_COMPLEX: ['Request too large: %s', 400],
  // Elasticsearch mirror (@mailgate/es)
  ES_UNAVAILABLE: ['Elasticsearch unavailable: %s', 503],
  ES_NOT_CONFIGURED: ['Elasticsearch is not configured: set ELASTICSEARCH_URL', 400],
  ES_UNSUPPORTED_QUERY: ['Not answerable by backend=es: %s', 400],
  // Legacy backends and IMAP import (@mailgate/legacy)
  MAILBOX_LOCKED: ['Mailbox file is locked by another writer: %s', 503],
  LEGACY_NOT_CONFIGURED: [
    'No %s storage configured for user %s (see: mailgate legacy add-user)',
    400,
  ],
  UPSTREAM_IMAP_FAILED: ['Upstream IMAP server %s: %s', 502],
  UPSTREAM_TLS_REQUIRED: [
    'Upstream IMAP server %s does not offer STARTTLS; use implicit TLS (--imap-tls) or allow plaintext explicitly (--imap-plaintext)',
    502,
  ],
  // Local delivery (`mailgate deliver`, LMTP): a transient fault outside the catalogue (the
  // LMTP server answers it 451 4.3.0, deliver exits 75); named by its system code only.
  DELIVERY_DEFERRED: ['Message not delivered now (%s); the sender should retry', 503],
  // A proxied user's mail relayed to the upstream LMTP/SMTP server of their legacy entry
  // (issue 33.4): no answer from it (transient: LMTP 451 4.4.1, deliver exit 75), or its own
  // permanent refusal (deliver exit 67 for 5.1.x, 69 otherwise; LMTP passes its reply on).
  UPSTREAM_DELIVERY_FAILED: ['Upstream delivery server %s: %s; the sender should retry', 503],
  UPSTREAM_DELIVERY_REFUSED: ['Upstream delivery server %s refused the message: %s', 502],
  // Relays in flight each hold a pooled connection (the user's delivery gate) while the old
  // server answers; past MAILGATE_RELAY_CONCURRENCY per process a relay is refused at once
  // (transient: LMTP 451 4.3.2, deliver exit 75) so a stalling old server cannot take the pool.
  RELAY_BUSY: ['Too many relays in flight (at most %s); the sender should retry', 503],
  // A relay target (`lmtp://host:port` or `smtp://host:port`) that is not one.
  RELAY_INVALID: ['Invalid relay target %s: use lmtp://host:port or smtp://host:port', 400],
  // A whole-server migration (`mailgate migrate --accounts FILE`, issue 33).
  ACCOUNTS_INVALID: ['Accounts file %s: %s', 400],
  // An account whose upstream kept failing (the last reason follows); it stays on proxy.
  MIGRATION_GAVE_UP: ['Gave up after %s attempts: %s', 502],
  // `mailgate migrate --report` when accounts failed (the report lists each with its reason).
  MIGRATION_INCOMPLETE: ['%s account(s) failed and stay on proxy: %s', 502],
  // `mailgate bench` that measured nothing (every backend skipped, nothing selected): it writes
  // no results and exits 1 naming why, instead of an empty results.json and exit 0.
  BENCH_NO_RESULTS: ['The benchmark produced no results: %s', 500],
  MAILBOX_MIGRATING: [
    'The account of %s is being migrated; changes are refused until the migration completes',
    409,
  ],
};

const errors = {};
for (const [code, [message, statusCode, defaults]] of Object.entries(defs)) {
  const CodedError = createError(code, message, statusCode);
  errors[code] = defaults ? withDefaults(CodedError, message, defaults) : CodedError;
}

/**
 * The constructor of a code whose last message arguments have defaults: a caller that leaves
 * them out gets them filled in (callable with or without `new`, like createError's).
 * @param {Function} CodedError createError's constructor
 * @param {string} message its template
 * @param {unknown[]} defaults values of the template's last placeholders
 * @returns {Function}
 */
function withDefaults(CodedError, message, defaults) {
  const placeholders = (message.match(/%[sdifjoO]/g) || []).length;
  const first = placeholders - defaults.length;
  function Defaulted(...args) {
    if (args.length >= first) {
      for (let i = args.length; i < placeholders; i++) args[i] = defaults[i - first];
    }
    return new CodedError(...args);
  }
  Defaulted.prototype = CodedError.prototype;
  return Defaulted;
}

/**
 * True when err comes from the catalogue (so its message is safe to show to a user).
 * @param {unknown} err
 * @returns {boolean}
 */
function isCoded(err) {
  return Boolean(err && typeof err.code === 'string' && errors[err.code]);
}

module.exports = { errors, isCoded };
