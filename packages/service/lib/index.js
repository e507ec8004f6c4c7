'use strict';

/**
 * @mailgate/service — the one mail interface: `openBackend(kind, user)` → a MailBackend for one
 * user (pg, es, mbox, maildir, imap), each declaring its `capabilities`. Owns the database,
 * Elasticsearch and legacy configuration of a process, the background purge, and user
 * management. Edges (API, IMAP server, CLI, bench) call this and nothing below it. README.md
 * is the authoritative interface.
 */

const fs = require('node:fs');
const { loadConfig, createLogger, errors, upstreamSecurity } = require('@mailgate/core');
const { PgStore, openDatabase, EmbeddedPostgres } = require('@mailgate/store');
const legacy = require('@mailgate/legacy');
const { listRowOf } = require('@mailgate/store');
const { MailBackend, OPERATIONS, READ_WRITE } = require('./backend');
const { PgBackend } = require('./pg-backend');
const { EsBackend } = require('./es-backend');
const { LegacyBackend, CAPABILITIES } = require('./legacy-backend');
const { Purger } = require('./purger');
const { IndexUpkeep } = require('./index-upkeep');
const { createUsers } = require('./users');
const { createDelivery, outcomeOf } = require('./delivery');
const { UserGate } = require('./user-gate');
const { createTransfer, checkExportTarget } = require('./transfer');
const { createFleet } = require('./fleet');
const { parseRelayTarget, relayTargetText } = require('./relay');
const { WarmUpBackend } = require('./warm-up');

// The user gate's name for the warm-up mailbox: a user name never holds a NUL.
const WARM_UP_OWNER = '\0warm-up';

/** Backend kinds openBackend knows. */
const KINDS = Object.freeze(['pg', 'es', 'mbox', 'maildir', 'imap']);

/** What each kind supports, without opening one (docs, `--help`, capability checks). */
const CAPABILITY_TABLE = Object.freeze({
  pg: OPERATIONS,
  es: OPERATIONS,
  ...CAPABILITIES,
});

/**
 * Creates the mail service of a process.
 * @param {object} [opts]
 * @param {NodeJS.ProcessEnv} [opts.env] configuration source (default process.env)
 * @param {import('knex').Knex} [opts.knex] an open database; without it the service opens
 *   (and on close releases) the one configured (DATABASE_URL or the embedded PostgreSQL)
 * @param {import('pino').Logger} [opts.logger]
 * @param {boolean} [opts.purge] purge expunged rows in the background (default true); the
 *   bench turns it off to restore expunged messages between samples
 * @param {boolean} [opts.outbox] write es_outbox rows (default: when ELASTICSEARCH_URL is set)
 * @param {object} [opts.config] an already loaded configuration (overrides env)
 * @param {boolean} [opts.createDatabase] false: an embedded database that does not exist yet
 *   is NO_DATABASE instead of being created (read-only commands)
 * @returns {Promise<MailService>}
 */
async function createMailService(opts = {}) {
  const env = opts.env || process.env;
  const config = opts.config || loadConfig(env);
  const logger = opts.logger || createLogger(config);
  let db = null;
  let knex = opts.knex;
  if (!knex) {
    db = await openDatabase(config, opts.createDatabase === false ? { create: false } : {});
    knex = db.knex;
  }
  const store = new PgStore(knex, {
    outbox: opts.outbox ?? Boolean(config.elasticsearchUrl),
    logger,
  });
  return new MailService({ config, env, logger, store, db, purge: opts.purge !== false });
}

class MailService {
  /** @param {object} ctx see createMailService */
  constructor(ctx) {
    this.config = ctx.config;
    this.env = ctx.env;
    this.logger = ctx.logger;
    this.store = ctx.store;
    this.db = ctx.db;
    this.purger = ctx.purge ? new Purger(this.store, this.logger) : null;
    // With the purge, the other background work of a long-lived process: merging the GIN
    // pending lists of users who got new mail, so that no delivery merges them (index-upkeep.js).
    this.indexUpkeep = ctx.purge ? new IndexUpkeep(this.store, this.logger) : null;
    this.mirror = null;
    this.users = createUsers(this.store);
    // Local delivery (LMTP, `mailgate deliver`): the address rule and the delivery headers;
    // messages are stored through the pg backend's append (delivery.js).
    this.delivery = createDelivery(this);
    // Import, export, verify, the quarantine and one account's migration (transfer.js): the
    // importer's operations on this store, so no edge needs the importer or the store.
    this.transfer = createTransfer(this);
    this.outboxWorker = null;
    // One per process: HTTP routes and IMAP commands of a user share its slots.
    const c = this.config;
    this.gate = new UserGate({
      perUser: c.userConcurrency,
      queue: c.userQueue,
      waitMs: c.userWaitMs,
      maxSubstringTerms: c.maxSubstringTerms,
      maxUids: c.maxUids,
    });
    // Whole-server migration (issue 33): the job queue and the fleet's figures (fleet.js).
    this.fleet = createFleet(this);
    this.closed = false;
  }

  /**
   * A backend for one user. pg/es need the user in the database (USER_NOT_FOUND); the legacy
   * kinds need the user's entry in $MAILGATE_HOME/legacy.json (LEGACY_NOT_CONFIGURED).
   * @param {'pg'|'es'|'mbox'|'maildir'|'imap'} kind
   * @param {string|{id: number, name: string}} user user name, or the user an authentication
   *   of this service just resolved (a token's or a login's `{id, name}`): no second lookup
   * @returns {Promise<MailBackend>}
   */
  async openBackend(kind, user) {
    if (!KINDS.includes(kind)) throw new errors.BACKEND_UNAVAILABLE(String(kind));
    const known = user !== null && typeof user === 'object' && Number.isInteger(user.id);
    const name = known ? user.name : user;
    // Every backend of the user, whatever the door, counts against the user's share (the
    // pool here; the render threads by `owner`, @mailgate/mime request.js).
    const be = await this.openUnguarded(kind, user, known, name);
    be.owner = String(name);
    return this.gate.guard(be, String(name));
  }

  /** openBackend without the user's gate. */
  async openUnguarded(kind, user, known, name) {
    if (kind === 'pg' || kind === 'es') {
      const u = known ? user : await this.store.getUser(name);
      const ctx = {
        store: this.store,
        user: { id: u.id, name: u.name },
        purger: this.purger,
        upkeep: this.indexUpkeep,
      };
      if (kind === 'pg') return new PgBackend(ctx);
      return new EsBackend({ ...ctx, mirror: this.openMirror() });
    }
    return new LegacyBackend(
      kind,
      legacy.openBackend(this.config.home, name, kind, this.config, this.logger),
    );
  }

  /**
   * The user's upstream IMAP account (`mailgate legacy add-user --imap-host …`) with its
   * password read from the named environment variable: what the IMAP server's migration proxy
   * logs in with. LEGACY_NOT_CONFIGURED without an entry; USAGE when the variable is unset.
   * @param {string} user
   * @returns {{host: string, port: number, login: string, password: string, security: 'tls'|'starttls'|'plaintext'}}
   *   security: upstreamSecurity of @mailgate/core (an entry without a setting is `starttls`)
   */
  upstreamAccount(user) {
    const a = legacy.userEntry(this.config.home, user, 'imap').imap;
    let password = a.password ?? (a.passwordEnv ? this.env[a.passwordEnv] : undefined);
    // An account registered by `mailgate migrate --accounts` may name a file instead.
    if (password == null && a.passwordFile) {
      try {
        password = fs.readFileSync(a.passwordFile, 'utf8').replace(/\r?\n$/, '');
      } catch (err) {
        throw new errors.USAGE(`password file ${a.passwordFile}: ${err.code || 'unreadable'}`);
      }
    }
    if (password == null) {
      throw new errors.USAGE(
        `environment variable ${a.passwordEnv || '(none)'} with the IMAP password is not set`,
      );
    }
    const security = upstreamSecurity(a);
    return { host: a.host, port: Number(a.port), login: a.login, password, security };
  }

  /**
   * The Elasticsearch mirror context (@mailgate/es), opened once; ES_NOT_CONFIGURED without
   * ELASTICSEARCH_URL.
   */
  openMirror() {
    if (!this.config.elasticsearchUrl) throw new errors.ES_NOT_CONFIGURED();
    if (!this.mirror) {
      const { openMirror } = require('@mailgate/es');
      this.mirror = openMirror(this.config, this.store, { log: this.logger, env: this.env });
    }
    return this.mirror;
  }

  /**
   * Ships every queued change to Elasticsearch and refreshes the indexes, so es searches see
   * all writes made so far (tests, `mailgate es sync`).
   * @param {{batchRows?: number, maxAttempts?: number, afterBulk?: Function, onProgress?: Function}} [opts]
   */
  async syncMirror(opts = {}) {
    const { syncAll } = require('@mailgate/es');
    return syncAll({ ...this.openMirror(), ...opts });
  }

  /**
   * Rebuilds the Elasticsearch indexes of every user (or of `user`) from PostgreSQL into new
   * indexes and switches the aliases (`mailgate es reindex`).
   * @param {{user?: string}} [opts]
   */
  async reindexMirror(opts = {}) {
    const { reindex } = require('@mailgate/es');
    const mirror = this.openMirror();
    if (opts.user) await this.users.get(opts.user);
    return reindex(mirror, { user: opts.user });
  }

  /**
   * Compares PostgreSQL and Elasticsearch per user and mailbox (`mailgate es verify`).
   * @param {{user?: string}} [opts]
   * @returns {Promise<{ok: boolean, pending: number, users: object[]}>}
   */
  async verifyMirror(opts = {}) {
    const { verify } = require('@mailgate/es');
    const mirror = this.openMirror();
    if (opts.user) await this.users.get(opts.user);
    return verify(mirror, { user: opts.user });
  }

  /**
   * Changes queued for the mirror (es_outbox rows), of one user with `user`: what a sync is
   * about to ship (the bench's progress line).
   * @param {{user?: string}} [opts]
   * @returns {Promise<number>}
   */
  async mirrorBacklog(opts = {}) {
    const u = opts.user == null ? null : await this.store.getUser(opts.user);
    return this.store.outboxPending(u ? u.id : undefined);
  }

  /**
   * The Elasticsearch cluster the mirror writes to (the bench's machine facts).
   * @returns {Promise<{name: string, status: string}>}
   */
  async mirrorCluster() {
    const h = await this.openMirror().client.cluster.health();
    return { name: h.cluster_name, status: h.status };
  }

  /**
   * Deletes every index under this service's MAILGATE_ES_PREFIX: the cleanup of a scratch
   * prefix (the bench's). Refused (USAGE) on the default prefix, whose indexes are a real
   * installation's mirror.
   * @returns {Promise<string[]>} the indexes deleted
   */
  async dropMirrorIndexes() {
    const { dropIndexes, prefixFrom } = require('@mailgate/es');
    const mirror = this.openMirror();
    if (mirror.prefix === prefixFrom({}))
      throw new errors.USAGE('the default Elasticsearch prefix is never dropped');
    return dropIndexes(mirror.client, mirror.prefix);
  }

  /**
   * Starts the Elasticsearch outbox worker beside the purger: it drains es_outbox while the
   * process serves, and stops in close(). ES_NOT_CONFIGURED without ELASTICSEARCH_URL.
   * Idempotent: one worker per service.
   * @param {{log?: import('pino').Logger}} [opts] where the worker logs (default the service's)
   */
  startOutboxWorker(opts = {}) {
    if (!this.outboxWorker) {
      const { EsWorker } = require('@mailgate/es');
      this.outboxWorker = new EsWorker({ ...this.openMirror(), log: opts.log || this.logger });
    }
    this.outboxWorker.start();
    return this.outboxWorker;
  }

  /** Stops the outbox worker after its current batch (nothing when none runs). */
  async stopOutboxWorker() {
    const w = this.outboxWorker;
    this.outboxWorker = null;
    if (w) await w.stop();
  }

  /**
   * Calls fn after every committed change to any mailbox's messages, made by any process
   * (new mail, flags, expunges: the store's change feed, PostgreSQL LISTEN/NOTIFY on one
   * connection per process), with `{userId, mailboxId}`; with `null` when changes may have
   * been missed (the connection was lost). For push (IMAP IDLE); callers keep a slow poll as
   * the fallback.
   * @param {(change: {userId: number, mailboxId: number}|null) => void} fn
   * @returns {() => void} unsubscribe
   */
  onMailboxChange(fn) {
    return this.store.mailboxChanges().subscribe(fn);
  }

  /**
   * Refreshes the planner statistics of a user's tables now (ANALYZE of the user's
   * partitions), as an import does at its end: the bench runs it, untimed, before timing.
   * @param {string} user
   */
  async analyzeUser(user) {
    await this.store.analyzeUser((await this.store.getUser(user)).id);
  }

  /**
   * VACUUM (ANALYZE) of a user's tables now: what autovacuum does some time after a bulk
   * import, done before the bench times anything, not beside it.
   * @param {string} user
   */
  async vacuumUser(user) {
    await this.store.vacuumUser((await this.store.getUser(user)).id);
  }

  /**
   * How many rows an expunge hid in a mailbox that the background purge has not removed yet
   * (the mailbox row's count): what a benchmark that times the purge waits on.
   * @param {string|{id: number}} user a name, or a user this service resolved
   * @param {string} mailbox
   * @returns {Promise<number>}
   */
  async awaitingPurge(user, mailbox) {
    const id =
      typeof user === 'object' && user !== null ? user.id : (await this.store.getUser(user)).id;
    const mb = await this.store.getMailbox(id, mailbox);
    if (!mb) throw new errors.MAILBOX_NOT_FOUND(mailbox);
    return Number(mb.expunged_pending);
  }

  /**
   * Bytes on disk of every table of the database after a checkpoint (heap with its maps,
   * TOAST, each index; per-user partitions under their own names), of one user's partitions
   * and the shared tables with `user`: the bench's disk figure (store disk-ops.js).
   * @param {{user?: string}} [opts]
   * @returns {Promise<{tables: object[], databaseBytes: number}>}
   */
  async diskUsage(opts = {}) {
    const u = opts.user == null ? null : await this.store.getUser(opts.user);
    return this.store.relationSizes(u ? { userId: u.id } : {});
  }

  /** One round trip to PostgreSQL (health checks); DB errors as the store raises them. */
  async ping() {
    await this.store.ping();
  }

  /**
   * How full the database pool is, and how many operations the busiest users run and queue
   * (health checks; no user names).
   * @returns {{pool: {size: number, used: number, free: number, waiting: number,
   *   saturated: boolean}, users: {perUser: number, active: number, queued: number}}}
   */
  load() {
    return { pool: this.store.poolStats(), users: this.gate.summary() };
  }

  /**
   * The synthetic in-memory mailbox a new server process warms its list-view and ENVELOPE
   * paths on (warm-up.js): no user's mail, no database. Behind a user gate of its own name
   * (one no user can have: it holds a NUL), as a user's backend is, so the gate's path is
   * warmed too.
   * @returns {object} a backend of one mailbox, INBOX
   */
  warmUpBackend() {
    return this.gate.guard(new WarmUpBackend(), WARM_UP_OWNER);
  }

  /**
   * Readies the pool's connections for a first list view or ENVELOPE fetch (store
   * warmImapReads: the packed reads for user id 0, which no user has): no row of any user is
   * read, nothing is written.
   * @param {{connections?: number}} [opts]
   */
  async warmUpReads(opts = {}) {
    await this.store.warmImapReads(opts);
  }

  /**
   * Queues the purge of rows hidden by an earlier run that stopped before purging them
   * (crash, shutdown). Servers call it once at start.
   * @returns {Promise<number>} mailboxes queued
   */
  async resumePurges() {
    if (!this.purger) return 0;
    const list = await this.store.pendingPurges();
    for (const p of list) this.purger.schedule(p.userId, p.mailboxId);
    return list.length;
  }

  /** Stops the purge (after its current batch), closes pooled connections and the database. */
  async close() {
    if (this.closed) return;
    this.closed = true;
    await this.fleet.close();
    await this.stopOutboxWorker();
    if (this.purger) await this.purger.close();
    if (this.indexUpkeep) await this.indexUpkeep.close();
    await legacy.closeBackends();
    if (this.mirror) await this.mirror.close();
    if (this.store && this.store.closeHealthProbe) await this.store.closeHealthProbe();
    if (this.store && this.store.closeMailboxChanges) this.store.closeMailboxChanges();
    if (this.store && this.store.closeCredentialProbe) await this.store.closeCredentialProbe();
    if (this.store && this.store.settleBackground) await this.store.settleBackground();
    if (this.store && this.store.closePreparedReads) await this.store.closePreparedReads();
    if (this.store && this.store.closeAppendWriter) await this.store.closeAppendWriter();
    if (this.db) await this.db.close();
  }
}

/**
 * Records where a user's legacy mail lives (`mailgate legacy add-user`): mbox folder, Maildir,
 * upstream IMAP account (only the password's variable name is kept), in
 * $MAILGATE_HOME/legacy.json. Needs no database, so no service: the file is the whole state.
 * @param {{home: string}} config loadConfig() result
 * @param {string} user
 * @param {object} entry `{mboxDir?, maildir?, imap?}`
 * @returns {object} the saved entry
 */
function addLegacyUser(config, user, entry) {
  return legacy.addLegacyUser(config.home, user, entry);
}

module.exports = {
  createMailService,
  addLegacyUser,
  // An export's target checked before any database is opened (OUTPUT_EXISTS without --force).
  checkExportTarget,
  // The list view's row (a projection of the header row), for edges that page full rows.
  listRowOf,
  MailService,
  MailBackend,
  Purger,
  KINDS,
  OPERATIONS,
  READ_WRITE,
  CAPABILITY_TABLE,
  // How a delivery attempt ended (stored/nouser/migrating/toobig/dataerr/tempfail/relayfail).
  deliveryOutcome: outcomeOf,
  // A relay target (`lmtp://host:port`) checked and written the one way (legacy add-user).
  parseRelayTarget,
  relayTargetText,
  // The database itself, for the edges that manage it (`mailgate db`, the API server's own
  // pool, the bench's machine facts): opened and started by the store, handed on here.
  openDatabase,
  EmbeddedPostgres,
};
