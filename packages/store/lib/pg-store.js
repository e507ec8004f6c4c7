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

/**
 * The PostgreSQL backend of the storage interface. Every method takes the user id first and
 * every query filters on it, which is what lets PostgreSQL prune to that user's partitions.
 * SQL values are always bound parameters.
 */
class PgStore {
  /**
   * @param {import('knex').Knex} knex
   * @param {{outbox?: boolean, logger?: import('pino').Logger}} [opts] outbox: write
   *   Elasticsearch outbox rows with every change (default: when ELASTICSEARCH_URL is set; see
   *   @mailgate/es); logger: where background work reports a failure (stats-ops.js)
   */
  constructor(knex, opts = {}) {
    this.knex = knex;
    this.logger = opts.logger || null;
    this.outbox = opts.outbox ?? Boolean(process.env.ELASTICSEARCH_URL);
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

  createUser(name, opts) {
    return users.createUser(this, name, opts);
  }

  getUser(name) {
    return users.getUser(this, name);
  }

  ensureUser(name) {
    return users.ensureUser(this, name);
  }

  ensureMailbox(userId, name) {
    return mailboxes.ensureMailbox(this, userId, name);
  }

  getMailbox(userId, name) {
    return mailboxes.getMailbox(this, userId, name);
  }

  listMailboxes(userId) {
    return mailboxes.listMailboxes(this, userId);
  }

  scanList(userId, mailbox, opts) {
    return scans.scanList(this, userId, mailbox, opts);
  }

  scanHeaders(userId, mailbox, opts) {
    return scans.scanHeaders(this, userId, mailbox, opts);
  }

  search(userId, query, opts) {
    return scans.search(this, userId, query, opts);
  }

  checkQueryMailboxes(userId, ast) {
    return scans.checkQueryMailboxes(this, userId, ast);
  }

  streamSources(userId, mailboxId) {
    return imports.streamSources(this, userId, mailboxId);
  }

  lookupKeys(userId, mailboxId, keys, opts) {
    return imports.lookupKeys(this, userId, mailboxId, keys, opts);
  }

  startJob(userId, kind, source, mailbox) {
    return imports.startJob(this, userId, kind, source, mailbox);
  }

  lockImportJob(jobId, onWait) {
    return imports.lockImportJob(this, jobId, onWait);
  }

  jobCheckpoint(userId, jobId) {
    return imports.jobCheckpoint(this, userId, jobId);
  }

  finishJob(userId, jobId, stats) {
    return imports.finishJob(this, userId, jobId, stats);
  }

  importBatch(userId, batch) {
    return imports.importBatch(this, userId, batch);
  }

  prepareBatch(userId, batch) {
    return imports.prepareBatch(this, userId, batch);
  }

  commitBatch(userId, plan, batch, opts) {
    return imports.commitBatch(this, userId, plan, batch, opts);
  }

  /** The names of the mailboxes a batch plan writes to, for a message (commitBatch). */
  mailboxNamesOf(userId, plan) {
    return imports.mailboxNamesOf(this, userId, plan);
  }

  cleanGinPending(userId, opts) {
    return imports.cleanGinPending(this, userId, opts);
  }

  rebuildGinIndexes(userId) {
    return imports.rebuildGinIndexes(this, userId);
  }

  /** The GIN indexes of a user's partitions, largest first: {name, tbl}. */
  ginIndexes(userId) {
    return imports.ginIndexes(this, userId);
  }

  userHasNoMail(userId) {
    return imports.userHasNoMail(this, userId);
  }

  writeListSnapshot(userId, mailboxId) {
    return imports.writeListSnapshot(this, userId, mailboxId);
  }

  analyzeUser(userId, opts) {
    return stats.analyzeUser(this, userId, opts);
  }

  vacuumUser(userId) {
    return stats.vacuumUser(this, userId);
  }

  // Bytes on disk of the store's relations (disk-ops.js).
  relationSizes(opts) {
    return disk.relationSizes(this, opts);
  }

  listQuarantine(userId, opts) {
    return imports.listQuarantine(this, userId, opts);
  }

  quarantineRaw(userId, id) {
    return imports.quarantineRaw(this, userId, id);
  }

  quarantineEntries(userId) {
    return imports.quarantineEntries(this, userId);
  }

  importSources() {
    return imports.importSources(this);
  }

  /*
   * The concerns in modules of their own are plain functions taking the store first; these
   * methods hand them this store, so callers keep calling store.<name>() and "go to
   * definition" reaches the function in one step.
   */

  // Users, tokens and routes (tokens.js, route-ops.js, user-ops.js).
  createToken(userId, opts) {
    return tokens.createToken(this, userId, opts);
  }

  findToken(token) {
    return tokens.findToken(this, token);
  }

  revokeUserTokens(userId, trx) {
    return tokens.revokeUserTokens(this, userId, trx);
  }

  revokeToken(userId, tokenId) {
    return tokens.revokeToken(this, userId, tokenId);
  }

  getRoute(name) {
    return routes.getRoute(this, name);
  }

  setRoute(name, route) {
    return routes.setRoute(this, name, route);
  }

  holdDeliveries(name) {
    return routes.holdDeliveries(this, name);
  }

  releaseDeliveries(name) {
    return routes.releaseDeliveries(this, name);
  }

  withDeliveryGate(userId, fn) {
    return routes.withDeliveryGate(this, userId, fn);
  }

  setPasswordHash(name, passwordHash) {
    return routes.setPasswordHash(this, name, passwordHash);
  }

  proxiedUsers(names) {
    return routes.proxiedUsers(this, names);
  }

  setMigrateOnLogin(name, on) {
    return routes.setMigrateOnLogin(this, name, on);
  }

  claimMigrateOnLogin(name) {
    return routes.claimMigrateOnLogin(this, name);
  }

  userSummaries() {
    return users.userSummaries(this);
  }

  deleteUser(name) {
    return users.deleteUser(this, name);
  }

  credentialStamps(names) {
    return users.credentialStamps(this, names);
  }

  closeCredentialProbe() {
    return users.closeCredentialProbe(this);
  }

  // Import batches: what the importer needs beyond prepareBatch/commitBatch (import-ops.js).
  quarantinedHashes(userId, mailbox, hashes) {
    return imports.quarantinedHashes(this, userId, mailbox, hashes);
  }

  importedImapUids(userId, mailboxId, folder, uidValidity) {
    return imports.importedImapUids(this, userId, mailboxId, folder, uidValidity);
  }

  importedImapSizes(userId, mailboxId, folder, uidValidity) {
    return imports.importedImapSizes(this, userId, mailboxId, folder, uidValidity);
  }

  raiseKeptUidNext(userId, mailboxId, uidValidity, uidNext, highestModseq) {
    return imports.raiseKeptUidNext(this, userId, mailboxId, uidValidity, uidNext, highestModseq);
  }

  replaceFlags(userId, mailboxId, wanted) {
    return imports.replaceFlags(this, userId, mailboxId, wanted);
  }

  // The Elasticsearch mirror's reads and the outbox drain (mirror-ops.js).
  drainOutbox(limit, ship) {
    return mirror.drainOutbox(this, limit, ship);
  }

  outboxBarrier() {
    return mirror.outboxBarrier(this);
  }

  outboxPending(userId) {
    return mirror.outboxPending(this, userId);
  }

  mirrorRows(userId, keys) {
    return mirror.mirrorRows(this, userId, keys);
  }

  mirrorPage(userId, after, limit) {
    return mirror.mirrorPage(this, userId, after, limit);
  }

  liveMessages(userId, pairs) {
    return mirror.liveMessages(this, userId, pairs);
  }

  messageVersions(userId) {
    return mirror.messageVersions(this, userId);
  }

  queryLexemes(texts) {
    return mirror.queryLexemes(this, texts);
  }

  listUsers(opts) {
    return mirror.listUsers(this, opts);
  }

  // Planner statistics after bulk writes (stats-ops.js).
  refreshStatsAfterBulk(userId, rows) {
    return stats.refreshStatsAfterBulk(this, userId, rows);
  }

  settleStats() {
    return stats.settleStats(this);
  }

  logStatsError(userId, err) {
    return stats.logStatsError(this, userId, err);
  }

  // Webmail orders of search hits (search-order.js).
  orderHits(userId, hits, opts) {
    return searchOrder.orderHits(this, userId, hits, opts);
  }

  // The IMAP server's stored metadata (imap-meta-ops.js).
  getImapMeta(userId, mailbox, uids) {
    return imapMeta.getImapMeta(this, userId, mailbox, uids);
  }

  putImapMeta(userId, mailbox, list) {
    return imapMeta.putImapMeta(this, userId, mailbox, list);
  }

  // Pages, scans, messages, flags, expunge and purge, the list caches, health (mail-ops.js).
  scanPage(userId, mailbox, opts) {
    return mail.scanPage(this, userId, mailbox, opts);
  }

  pageAndTotal(userId, mailbox, opts) {
    return mail.pageAndTotal(this, userId, mailbox, opts);
  }

  pageOnly(userId, mailbox, opts) {
    return mail.pageOnly(this, userId, mailbox, opts);
  }

  streamHeadersNdjson(userId, mailboxId, opts) {
    return mail.streamHeadersNdjson(this, userId, mailboxId, opts);
  }

  cachedNdjson(userId, mailboxId, opts) {
    return mail.cachedNdjson(this, userId, mailboxId, opts);
  }

  streamHeaderRows(userId, mailboxId, opts) {
    return mail.streamHeaderRows(this, userId, mailboxId, opts);
  }

  sourcesFor(userId, mailbox, uids, opts) {
    return mail.sourcesFor(this, userId, mailbox, uids, opts);
  }

  sourcesWithMailbox(userId, mailbox, uids, opts) {
    return mail.sourcesWithMailbox(this, userId, mailbox, uids, opts);
  }

  getMessage(userId, mailbox, uid) {
    return mail.getMessage(this, userId, mailbox, uid);
  }

  headersFor(userId, hits) {
    return mail.headersFor(this, userId, hits);
  }

  setFlags(userId, mailbox, opts) {
    return mail.setFlags(this, userId, mailbox, opts);
  }

  expunge(userId, mailbox, opts) {
    return mail.expunge(this, userId, mailbox, opts);
  }

  restoreExpunged(userId, mailbox, uids) {
    return mail.restoreExpunged(this, userId, mailbox, uids);
  }

  purgeExpunged(userId, mailboxId, opts) {
    return mail.purgeExpunged(this, userId, mailboxId, opts);
  }

  ping() {
    return mail.ping(this);
  }

  poolStats() {
    return mail.poolStats(this);
  }

  closeHealthProbe() {
    return mail.closeHealthProbe(this);
  }

  settleBackground() {
    return mail.settleBackground(this);
  }

  pendingPurges() {
    return mail.pendingPurges(this);
  }

  // Mailbox life cycle, subscriptions, COPY/MOVE, changesSince (mailbox-ops.js).
  createMailbox(userId, name, opts) {
    return mailboxes.createMailbox(this, userId, name, opts);
  }

  renameMailbox(userId, from, to) {
    return mailboxes.renameMailbox(this, userId, from, to);
  }

  deleteMailbox(userId, name) {
    return mailboxes.deleteMailbox(this, userId, name);
  }

  claimRecent(userId, name, opts) {
    return mailboxes.claimRecent(this, userId, name, opts);
  }

  countRecent(userId, mb) {
    return mailboxes.countRecent(this, userId, mb);
  }

  setSubscribed(userId, name, subscribed) {
    return mailboxes.setSubscribed(this, userId, name, subscribed);
  }

  listSubscriptions(userId) {
    return mailboxes.listSubscriptions(this, userId);
  }

  mailboxNamesById(userId) {
    return mailboxes.mailboxNamesById(this, userId);
  }

  countMessages(userId, mailbox, opts) {
    return mailboxes.countMessages(this, userId, mailbox, opts);
  }

  countIn(userId, mailbox, opts) {
    return mailboxes.countIn(this, userId, mailbox, opts);
  }

  copyMessages(userId, srcId, uids, dstId, opts) {
    return mailboxes.copyMessages(this, userId, srcId, uids, dstId, opts);
  }

  copyInTransaction(userId, srcId, uids, dstId, opts) {
    return mailboxes.copyInTransaction(this, userId, srcId, uids, dstId, opts);
  }

  changesSince(userId, mailbox, modseq) {
    return mailboxes.changesSince(this, userId, mailbox, modseq);
  }

  // APPEND, LMTP and deliver: the one append path (append-ops.js).
  appendMessage(userId, mailbox, msg) {
    return appends.appendMessage(this, userId, mailbox, msg);
  }

  appendMessages(userId, mailbox, msgs) {
    return appends.appendMessages(this, userId, mailbox, msgs);
  }

  appendTransaction(userId, mailbox, msgs, hashes) {
    return appends.appendTransaction(this, userId, mailbox, msgs, hashes);
  }

  // Webmail threads (thread-ops.js).
  assignThreads(userId) {
    return threads.assignThreads(this, userId);
  }

  listThreads(userId, opts) {
    return threads.listThreads(this, userId, opts);
  }

  threadMessages(userId, threadId) {
    return threads.threadMessages(this, userId, threadId);
  }

  // Failed-login counts shared by every process (login-ops.js).
  loginFailureCounts(keys, nowMs) {
    return logins.loginFailureCounts(this, keys, nowMs);
  }

  addLoginFailure(keys, nowMs, windowMs) {
    return logins.addLoginFailure(this, keys, nowMs, windowMs);
  }

  clearLoginFailures(keys) {
    return logins.clearLoginFailures(this, keys);
  }

  // Fleet migration jobs (fleet-ops.js).
  registerMigrationAccount(a) {
    return fleet.registerMigrationAccount(this, a);
  }

  migrationAccount(userId) {
    return fleet.migrationAccount(this, userId);
  }

  migrationAccounts() {
    return fleet.migrationAccounts(this);
  }

  updateMigrationAccount(userId, fields) {
    return fleet.updateMigrationAccount(this, userId, fields);
  }

  addMigrationProgress(userId, messages, bytes) {
    return fleet.addMigrationProgress(this, userId, messages, bytes);
  }

  userMailTotals(userId) {
    return fleet.userMailTotals(this, userId);
  }

  runningMigrationsOnHost(host, port) {
    return fleet.runningMigrationsOnHost(this, host, port);
  }

  holdMigrationLocks() {
    return fleet.holdMigrationLocks(this);
  }

  queueDb() {
    return fleet.queueDb(this);
  }
}

/** knex's raw(sql, bindings) with `?` placeholders over a bare pg client (commitBatch). */
module.exports = { PgStore };
