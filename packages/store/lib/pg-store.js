'use strict';

const { loadConfig } = require('@mailgate/core');
const {
  HEADER_COLUMNS,
  LIST_COLUMNS,
  LIST_FORMAT,
  TEXT_TYPES,
  headerRow,
  listRow,
  packListRow,
  unpackListRow,
} = require('./header-row');
const { ListCache } = require('./list-cache');
const { MailboxChangeFeed } = require('./change-feed');
const threads = require('./thread-ops');
const tokens = require('./tokens');
const routes = require('./route-ops');
const users = require('./user-ops');
const imports = require('./import-ops');
const mirror = require('./mirror-ops');
const stats = require('./stats-ops');
const searchOrder = require('./search-order');
const imapMeta = require('./imap-meta-ops');
const mail = require('./mail-ops');
const mailboxes = require('./mailbox-ops');
const appends = require('./append-ops');
const fleet = require('./fleet-ops');
const logins = require('./login-ops');
const scans = require('./scan-ops');
const disk = require('./disk-ops');
const prepared = require('./prepared-reads');
const appendWriter = require('./append-writer');

/**
 * The concerns the store is composed of: each a plain module of functions taking the store
 * first, and the operations it offers the service under the same names (`store.setFlags(…)` is
 * mail-ops.js `setFlags(store, …)`). A module's other exports are its own helpers or shared
 * with another concern (mail-ops.js lockMailbox), not operations. The line of an operation
 * names its module: that is where "go to definition" continues.
 */
const CONCERNS = {
  // users, their partitions, summaries, deletion (user-ops.js)
  users: [
    users,
    [
      'createUser',
      'getUser',
      'findUser',
      'ensureUser',
      'userSummaries',
      'deleteUser',
      'credentialStamps',
      'closeCredentialProbe',
    ],
  ],
  // API tokens (tokens.js)
  tokens: [tokens, ['createToken', 'findToken', 'revokeUserTokens', 'revokeToken']],
  // a user's IMAP route, store or proxy, its delivery hold, and password (route-ops.js)
  routes: [
    routes,
    [
      'getRoute',
      'setRoute',
      'holdDeliveries',
      'releaseDeliveries',
      'withDeliveryGate',
      'setPasswordHash',
      'proxiedUsers',
      'setMigrateOnLogin',
      'claimMigrateOnLogin',
    ],
  ],
  // failed-login counts shared by every process (login-ops.js)
  logins: [logins, ['loginFailureCounts', 'addLoginFailure', 'clearLoginFailures']],
  // mailbox life cycle, subscriptions, COPY/MOVE, changesSince (mailbox-ops.js)
  mailboxes: [
    mailboxes,
    [
      'ensureMailbox',
      'getMailbox',
      'listMailboxes',
      'createMailbox',
      'renameMailbox',
      'deleteMailbox',
      'claimRecent',
      'countRecent',
      'setSubscribed',
      'listSubscriptions',
      'mailboxNamesById',
      'countMessages',
      'countIn',
      'copyMessages',
      'copyInTransaction',
      'changesSince',
    ],
  ],
  // the list view, header rows, search (scan-ops.js)
  scans: [scans, ['scanList', 'scanHeaders', 'search', 'checkQueryMailboxes']],
  // pages, NDJSON, messages, flags, expunge and purge, health (mail-ops.js)
  mail: [
    mail,
    [
      'scanPage',
      'pageAndTotal',
      'pageOnly',
      'streamHeadersNdjson',
      'cachedNdjson',
      'streamHeaderRows',
      'sourcesFor',
      'sourcesWithMailbox',
      'getMessage',
      'headersFor',
      'setFlags',
      'expunge',
      'restoreExpunged',
      'purgeExpunged',
      'ping',
      'poolStats',
      'closeHealthProbe',
      'settleBackground',
      'pendingPurges',
    ],
  ],
  // hot reads as named statements with kept generic plans, on a pool of their own (prepared-reads.js)
  prepared: [prepared, ['closePreparedReads', 'preparedPlans']],
  // APPEND, LMTP and deliver: the one append path (append-ops.js)
  appends: [appends, ['appendMessage', 'appendMessages', 'appendTransaction']],
  // the append's pipelined connections, named statements (append-writer.js)
  appendWriter: [appendWriter, ['closeAppendWriter']],
  // import jobs, batches, GIN upkeep, quarantine (import-ops.js)
  imports: [
    imports,
    [
      'streamSources',
      'lookupKeys',
      'startJob',
      'lockImportJob',
      'jobCheckpoint',
      'finishJob',
      'importBatch',
      'prepareBatch',
      'commitBatch',
      'mailboxNamesOf',
      'cleanGinPending',
      'rebuildGinIndexes',
      'ginIndexes',
      'userHasNoMail',
      'writeListSnapshot',
      'listQuarantine',
      'quarantineRaw',
      'quarantineEntries',
      'importSources',
      'quarantinedHashes',
      'importedImapUids',
      'importedImapSizes',
      'raiseKeptUidNext',
      'replaceFlags',
    ],
  ],
  // planner statistics, VACUUM (stats-ops.js)
  stats: [
    stats,
    ['analyzeUser', 'vacuumUser', 'refreshStatsAfterBulk', 'settleStats', 'logStatsError'],
  ],
  // bytes on disk (disk-ops.js)
  disk: [disk, ['relationSizes']],
  // webmail threads (thread-ops.js)
  threads: [threads, ['assignThreads', 'listThreads', 'threadMessages']],
  // webmail orders of search hits (search-order.js)
  searchOrder: [searchOrder, ['orderHits']],
  // the ES mirror's reads and the outbox drain (mirror-ops.js)
  mirror: [
    mirror,
    [
      'drainOutbox',
      'outboxBarrier',
      'outboxPending',
      'mirrorRows',
      'mirrorPage',
      'liveMessages',
      'messageVersions',
      'queryLexemes',
      'listUsers',
    ],
  ],
  // the IMAP server's stored metadata (imap-meta-ops.js)
  imapMeta: [
    imapMeta,
    [
      'getImapMeta',
      'getImapFieldsRange',
      'warmImapReads',
      'messagesWithoutImapMeta',
      'putImapMeta',
    ],
  ],
  // fleet migration jobs (fleet-ops.js)
  fleet: [
    fleet,
    [
      'registerMigrationAccount',
      'migrationAccount',
      'migrationAccounts',
      'updateMigrationAccount',
      'addMigrationProgress',
      'userMailTotals',
      'runningMigrationsOnHost',
      'holdMigrationLocks',
      'queueDb',
    ],
  ],
};

/**
 * The PostgreSQL backend of the storage interface. Every method takes the user id first and
 * every query filters on it, which is what lets PostgreSQL prune to that user's partitions.
 * SQL values are always bound parameters. The class is the store's context (connection, caches,
 * outbox flag, change feed); its operations are the concern modules' functions, composed onto
 * it from one table (CONCERNS, above).
 */
class PgStore {
  /**
   * @param {import('knex').Knex} knex
   * @param {{outbox?: boolean, logger?: import('pino').Logger, preparedReads?: boolean}} [opts]
   *   preparedReads: hot reads as prepared statements (default MAILGATE_PG_PREPARED_READS); outbox: write
   *   Elasticsearch outbox rows with every change (default: when ELASTICSEARCH_URL is set; see
   *   @mailgate/es); logger: where background work reports a failure (stats-ops.js)
   */
  constructor(knex, opts = {}) {
    this.knex = knex;
    this.logger = opts.logger || null;
    this.outbox = opts.outbox ?? Boolean(process.env.ELASTICSEARCH_URL);
    // IMAP FETCH's read of message bytes as a prepared read (prepared-reads.js).
    this.preparedReads = opts.preparedReads ?? loadConfig().pgPreparedReads > 0;
    // Header scans are served from a per-mailbox cache kept exact by modseq (list-cache.js).
    const rows = opts.listCacheRows ?? loadConfig().listCacheRows;
    this.listCache =
      rows > 0 ? new ListCache({ maxRows: rows, select: HEADER_COLUMNS, toRow: headerRow }) : null;
    // The list view (scanList) has a cache of its own, kept exact the same way and bounded by
    // the same number of rows (a list row is about a quarter of a full one): a client that
    // only lists never holds full rows, and a cold list reads 6 MB instead of 22 (Enron large).
    // Only this one persists its rows (list-cache.js, persist): a service started with empty
    // memory reads the list view as one JSON value instead of building every row by SQL.
    this.listViewCache =
      rows > 0
        ? new ListCache({
            maxRows: rows,
            select: LIST_COLUMNS,
            toRow: listRow,
            dateKeys: false,
            queryOptions: { types: TEXT_TYPES },
            persist: { format: LIST_FORMAT, pack: packListRow, unpack: unpackListRow },
          })
        : null;
  }

  /**
   * The process's feed of committed mailbox changes (change-feed.js: one LISTEN connection,
   * opened at the first subscriber).
   * @returns {MailboxChangeFeed}
   */
  mailboxChanges() {
    if (!this.changeFeed) this.changeFeed = new MailboxChangeFeed(this.knex);
    return this.changeFeed;
  }

  /** Closes the change feed's connection (before the pool is destroyed). */
  closeMailboxChanges() {
    if (this.changeFeed) this.changeFeed.close();
  }
}

/**
 * Gives `Store`'s prototype one method per operation of `concerns`, calling the module's
 * function with the store first. Throws at load on an operation its module does not export and
 * on a name two concerns (or the class itself) define: two concerns once both defined
 * `listUsers` and the later silently replaced the earlier. The record of who owns what is
 * `Store.operations`.
 * @param {Function} Store the class
 * @param {Record<string, [object, string[]]>} concerns name → [module, operation names]
 * @returns {Map<string, {concern: string, fn: Function}>} operation → its concern and function
 */
function compose(Store, concerns) {
  const operations = new Map();
  for (const [concern, [mod, names]] of Object.entries(concerns)) {
    for (const name of names) {
      const fn = mod[name];
      if (typeof fn !== 'function')
        throw new Error(`store operation ${name}: ${concern} does not export it`);
      const owner = operations.get(name);
      if (owner || Object.prototype.hasOwnProperty.call(Store.prototype, name))
        throw new Error(
          `store operation ${name}: defined by ${owner ? owner.concern : 'the class'} and ${concern}`,
        );
      operations.set(name, { concern, fn });
      Object.defineProperty(Store.prototype, name, {
        // A named method, so that stacks and the shape test see the operation's name.
        value: {
          [name](...args) {
            return fn(this, ...args);
          },
        }[name],
        writable: true,
        configurable: true,
      });
    }
  }
  return operations;
}

PgStore.operations = compose(PgStore, CONCERNS);

module.exports = { PgStore, CONCERNS, compose };
