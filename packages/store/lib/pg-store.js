'use strict';

const { errors, loadConfig } = require('@mailgate/core');
const { copyRows } = require('./copy');
const {
  HEADER_COLUMNS,
  LIST_COLUMNS,
  LIST_FORMAT,
  TEXT_TYPES,
  headerRow,
  headerJson,
  listRow,
  packListRow,
  unpackListRow,
} = require('./header-row');
const { ListCache } = require('./list-cache');
const { MailboxChangeFeed } = require('./change-feed');
const { planKeptUids } = require('./kept-uids');
const { MESSAGE_COLUMNS, SOURCE_COLUMNS, QUARANTINE_COLUMNS } = require('./columns');
const threads = require('./thread-ops');
const { perUserPartitions } = require('./citus');
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

// First key of the import jobs' advisory locks (the second is the job id): a namespace of its
// own so no other advisory lock of the store collides with them.
const IMPORT_LOCK_SPACE = 30003;

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

  /**
   * Streams a mailbox's messages with raw bytes and mbox envelope data, in uid order.
   * Memory stays bounded: rows come from a server-side cursor.
   * @param {number} userId
   * @param {number} mailboxId
   * @returns {NodeJS.ReadableStream} object stream of rows
   */
  streamSources(userId, mailboxId) {
    return this.knex
      .raw(
        `SELECT m.uid, m.flags, m.keywords, m.internal_date, m.from_addr, m.source_name,
                m.content_hash, m.dup_index,
                s.raw, s.mbox_from_line, s.mbox_variant, s.mbox_trailer, s.mbox_original,
                s.source_meta
           FROM messages m
           JOIN message_sources s
             ON s.user_id = m.user_id AND s.mailbox_id = m.mailbox_id AND s.uid = m.uid
          WHERE m.user_id = ? AND m.mailbox_id = ? AND NOT m.expunged
          ORDER BY m.uid`,
        [userId, mailboxId],
      )
      .stream({ highWaterMark: 64 });
  }

  /**
   * Looks up which (hash, dup_index) keys of a mailbox exist, and whether the stored bytes
   * still hash to the key (verify's byte-identity check, computed by PostgreSQL).
   * @param {number} userId
   * @param {number} mailboxId
   * @param {Array<{hash: Buffer, dup: number}>} keys
   * @returns {Promise<Map<string, {uid: number, intact: boolean}>>} keyed by `hex:dup`
   */
  async lookupKeys(userId, mailboxId, keys, { checkBytes = false } = {}) {
    const out = new Map();
    if (!keys.length) return out;
    const r = await this.knex.raw(
      `SELECT m.content_hash, m.dup_index, m.uid
              ${checkBytes ? ', sha256(s.raw) = m.content_hash AS intact' : ''}
         FROM messages m
         ${checkBytes ? 'JOIN message_sources s ON s.user_id = m.user_id AND s.mailbox_id = m.mailbox_id AND s.uid = m.uid' : ''}
         JOIN unnest(?::bytea[], ?::int[]) AS k(hash, dup)
           ON m.content_hash = k.hash AND m.dup_index = k.dup
        WHERE m.user_id = ? AND m.mailbox_id = ? AND NOT m.expunged`,
      [keys.map((k) => k.hash), keys.map((k) => k.dup), userId, mailboxId],
    );
    for (const row of r.rows) {
      out.set(`${row.content_hash.toString('hex')}:${row.dup_index}`, {
        uid: Number(row.uid),
        intact: checkBytes ? row.intact : true,
      });
    }
    return out;
  }

  /**
   * Starts or resumes an import job; the checkpoint tells where a killed run stopped.
   * @returns {Promise<{id: number, checkpoint: object|null, state: string}>}
   */
  async startJob(userId, kind, source, mailbox = '') {
    await this.knex('import_jobs')
      .insert({ user_id: userId, kind, source, mailbox })
      .onConflict(['user_id', 'kind', 'source', 'mailbox'])
      .ignore();
    const job = await this.knex('import_jobs')
      .where({ user_id: userId, kind, source, mailbox })
      .first();
    await this.knex('import_jobs')
      .where({ user_id: userId, id: job.id })
      .update({ state: 'running', updated_at: this.knex.fn.now() });
    return job;
  }

  /**
   * Holds an import job's lock until the returned release is called, so two runs of the same
   * import (user, kind, source, mailbox) take turns instead of writing the same batches at once
   * (issue 30.3: one of them used to fail on the idempotency key, its allocated uids lost). A
   * session-level advisory lock on a connection of its own: PostgreSQL lets it go if the
   * process dies, so a killed run never blocks the next one.
   * @param {number} jobId
   * @param {() => void} [onWait] called once, before waiting, when another run holds it
   * @returns {Promise<() => Promise<void>>} release
   */
  async lockImportJob(jobId, onWait) {
    const client = await this.knex.client.acquireConnection();
    const key = [IMPORT_LOCK_SPACE, Number(jobId)];
    try {
      const r = await client.query('SELECT pg_try_advisory_lock($1, $2) AS ok', key);
      if (!r.rows[0].ok) {
        if (onWait) onWait();
        await client.query('SELECT pg_advisory_lock($1, $2)', key);
      }
    } catch (err) {
      await this.knex.client.releaseConnection(client);
      throw err;
    }
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      try {
        await client.query('SELECT pg_advisory_unlock($1, $2)', key);
      } finally {
        await this.knex.client.releaseConnection(client);
      }
    };
  }

  /**
   * Every import_jobs statement names the user too: on Citus the job lives in its user's shard
   * (citus.js), and by id alone the statement would visit every shard.
   * @param {number} userId
   * @param {number} jobId
   * @returns {Promise<object|null>} the job's checkpoint now (after waiting for its lock)
   */
  async jobCheckpoint(userId, jobId) {
    const job = await this.knex('import_jobs')
      .where({ user_id: userId, id: jobId })
      .first('checkpoint');
    return (job && job.checkpoint) || null;
  }

  /**
   * Marks a job finished and clears its checkpoint (a later run re-checks everything).
   * @param {number} userId
   * @param {number} jobId
   * @param {object} stats
   */
  async finishJob(userId, jobId, stats) {
    await this.knex('import_jobs')
      .where({ user_id: userId, id: jobId })
      .update({
        state: 'done',
        checkpoint: null,
        stats: JSON.stringify(stats),
        updated_at: this.knex.fn.now(),
      });
  }

  /**
   * Writes one import batch in one transaction: new messages (uids allocated per mailbox),
   * quarantined entries, and the job checkpoint — so a crash at any point leaves either the
   * whole batch with its checkpoint, or neither.
   *
   * @param {number} userId
   * @param {{messages: Array<object>, quarantined: Array<object>, jobId?: number, checkpoint?: object}} batch
   *   messages: {mailboxId, hash, dup, row (derived columns), source (message_sources columns)}
   *   and optionally the source's numbering: {uidValidity, uid, uidNext} (kept-uids.js)
   * @returns {Promise<{imported: number, duplicates: number, quarantined: number, perMailbox: Map<number, number>, uidsNotKept: number[]}>}
   *   uidsNotKept: mailboxes whose source uids could not be kept (their UIDVALIDITY is not the source's)
   */
  async importBatch(userId, batch) {
    const plan = await this.prepareBatch(userId, batch);
    return this.commitBatch(userId, plan, batch);
  }

  /**
   * Phase 1 of a batch write, short and outside the batch transaction: finds which messages
   * are already stored and allocates uids (and a modseq) for the rest, in one atomic UPDATE
   * per mailbox. Allocating outside the long transaction lets the next batch load while this
   * one commits; a batch that then fails leaves a gap in the uids, which IMAP allows
   * (RFC 3501 2.3.1.1: strictly ascending, not contiguous).
   *
   * @param {number} userId
   * @param {{messages: Array<object>}} batch
   * @returns {Promise<{msgRows: object[], srcRows: object[], imported: number, duplicates: number, perMailbox: Map<number, number>}>}
   */
  async prepareBatch(userId, batch) {
    const plan = {
      msgRows: [],
      srcRows: [],
      imported: 0,
      duplicates: 0,
      perMailbox: new Map(),
      uidFloors: new Map(),
      uidsNotKept: [],
    };
    for (const [mailboxId, items] of groupBy(batch.messages, (m) => m.mailboxId)) {
      const exists = await lookupIn(this.knex, userId, mailboxId, items);
      const fresh = [];
      for (const it of items) {
        const key = `${it.hash.toString('hex')}:${it.dup}`;
        if (exists.has(key)) plan.duplicates++;
        else {
          exists.add(key);
          fresh.push(it);
        }
      }
      if (!fresh.length) continue;
      // Caller-given uids (kept-uids.js): those messages keep theirs, the rest are allocated
      // at or above the source's UIDNEXT; UIDNEXT passes them in commitBatch's transaction.
      const kept = await planKeptUids(this.knex, userId, mailboxId, fresh);
      if (kept && !kept.keep) plan.uidsNotKept.push(mailboxId);
      const keep = Boolean(kept && kept.keep);
      const nAlloc = keep ? fresh.filter((it) => it.uid == null).length : fresh.length;
      const alloc = (
        await this.knex.raw(
          `UPDATE mailboxes SET uidnext = GREATEST(uidnext, ?) + ?, highestmodseq = highestmodseq + 1
            WHERE id = ? AND user_id = ? RETURNING uidnext - ? AS first, highestmodseq`,
          [keep && nAlloc ? kept.allocFrom : 0, nAlloc, mailboxId, userId, nAlloc],
        )
      ).rows[0];
      if (keep && kept.next) plan.uidFloors.set(mailboxId, kept.next);
      let next = Number(alloc.first);
      const modseq = Number(alloc.highestmodseq);
      for (const it of fresh) {
        const uid = keep && it.uid != null ? Number(it.uid) : next++;
        plan.msgRows.push({
          ...it.row,
          header_json: it.row.header_json || headerJson(it.row),
          user_id: userId,
          mailbox_id: mailboxId,
          uid,
          modseq,
          content_hash: it.hash,
          dup_index: it.dup,
        });
        plan.srcRows.push({ ...it.source, user_id: userId, mailbox_id: mailboxId, uid });
      }
      plan.imported += fresh.length;
      plan.perMailbox.set(mailboxId, fresh.length);
    }
    return plan;
  }

  /**
   * Phase 2: one transaction with the new rows (COPY), quarantined entries and the job
   * checkpoint, so a crash leaves either the whole batch with its checkpoint or neither.
   * `opts.after` (the previous batch's commit) is awaited just before COMMIT: batches load
   * concurrently but commit in source order, and a failed predecessor rolls this one back,
   * so a checkpoint never claims more than is stored. The thread stage runs then too, in the
   * same transaction (thread-ops.js threadBatch): the batch's messages commit with their
   * thread ids, and only the threads they touch are read. `timings` (ms) and `threaded` tell
   * where the batch's time went (the import report's `stages`).
   *
   * @param {number} userId
   * @param {Awaited<ReturnType<PgStore['prepareBatch']>>} plan
   * @param {{quarantined: Array<object>, jobId?: number, checkpoint?: object}} batch
   * @param {{after?: Promise<unknown>}} [opts]
   */
  async commitBatch(userId, plan, batch, opts = {}) {
    const client = await this.knex.client.acquireConnection();
    try {
      await client.query('BEGIN');
      // Bulk loads append GIN entries to the indexes' pending lists instead of merging them
      // row by row; the importer merges them with cleanGinPending() every 2 MB of mail and at
      // the end (a merge an insert set off would not hand its freed pages back for reuse).
      await client.query("SET LOCAL gin_pending_list_limit = '1GB'");
      // An OS crash may lose the last few batches, never part of one: the checkpoint commits
      // with its rows, so a resumed import redoes exactly what was lost. Saves an fsync wait
      // per batch.
      await client.query('SET LOCAL synchronous_commit = off');
      const timings = {
        copyMs: 0,
        sourcesMs: 0,
        outboxMs: 0,
        waitMs: 0,
        statsMs: 0,
        threadMs: 0,
        commitMs: 0,
      };
      let t = process.hrtime.bigint();
      const lap = (name) => {
        const now = process.hrtime.bigint();
        timings[name] += Number(now - t) / 1e6;
        t = now;
      };
      await copyRows(client, 'messages', MESSAGE_COLUMNS, plan.msgRows);
      lap('copyMs');
      await copyRows(client, 'message_sources', SOURCE_COLUMNS, plan.srcRows);
      const db = knexLike(client);
      await threads.writeThreadKeys(db, userId, plan.msgRows);
      lap('sourcesMs');
      if (this.outbox && plan.msgRows.length) {
        // The ES mirror's outbox rows commit with the messages (packages/es/README.md).
        await client.query(
          `INSERT INTO es_outbox (user_id, mailbox_id, uid, modseq, op)
           SELECT $1, b, u, s, 'index' FROM unnest($2::int[], $3::bigint[], $4::bigint[]) AS t(b, u, s)`,
          [userId, ...['mailbox_id', 'uid', 'modseq'].map((c) => plan.msgRows.map((r) => r[c]))],
        );
      }
      for (const q of batch.quarantined) {
        // Not COPY: a re-run meets the same bad entries again, and ON CONFLICT needs INSERT.
        const row = { ...q, user_id: userId };
        await client.query(
          `INSERT INTO quarantine (${QUARANTINE_COLUMNS.join(', ')})
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
           ON CONFLICT (user_id, source, position, content_hash) DO NOTHING`,
          QUARANTINE_COLUMNS.map((c) => row[c]),
        );
      }
      lap('outboxMs');
      if (opts.after) await opts.after;
      lap('waitMs');
      if (await perUserPartitions(this.knex)) await statsForNewPartition(client, userId);
      lap('statsMs');
      // Thread stage, incremental: after the previous batch committed (its messages are the
      // likeliest parents), under the user's thread lock (appends and copies take it too).
      await threads.lockThreads(db, userId);
      const threaded = await threads.threadBatch(this, db, userId, plan.msgRows);
      lap('threadMs');
      for (const [mailboxId, next] of plan.uidFloors || []) {
        // Kept uids: UIDNEXT passes them with the rows, so a failed batch leaves it where it
        // was and a resumed import can still keep them (kept-uids.js). Last, after the previous
        // batch committed: the mailbox row lock is not held while waiting for it (whose thread
        // stage may need that row).
        await client.query(
          'UPDATE mailboxes SET uidnext = GREATEST(uidnext, $1) WHERE id = $2 AND user_id = $3',
          [next, mailboxId, userId],
        );
      }
      if (batch.jobId) {
        await client.query(
          'UPDATE import_jobs SET checkpoint = $1, updated_at = now() WHERE user_id = $2 AND id = $3',
          [JSON.stringify(batch.checkpoint), userId, batch.jobId],
        );
      }
      await client.query('COMMIT');
      lap('commitMs');
      return {
        timings,
        threaded,
        imported: plan.imported,
        duplicates: plan.duplicates,
        quarantined: batch.quarantined.length,
        perMailbox: plan.perMailbox,
        uidsNotKept: plan.uidsNotKept || [],
      };
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      // Another writer (an import of another source holding the same mail, outside this job's
      // lock) stored one of these messages between prepareBatch and here: a coded answer, not
      // the constraint's text; a re-run finds those messages present.
      if (err.code === '23505' && /^messages_/.test(err.constraint || '')) {
        throw new errors.IMPORT_CONFLICT(await this.mailboxNamesOf(userId, plan));
      }
      throw err;
    } finally {
      await this.knex.client.releaseConnection(client);
    }
  }

  /** The names of the mailboxes a batch plan writes to, for a message (commitBatch). */
  async mailboxNamesOf(userId, plan) {
    const ids = [...new Set(plan.msgRows.map((r) => r.mailbox_id))];
    const rows = await this.knex('mailboxes')
      .where({ user_id: userId })
      .whereIn('id', ids)
      .select('name')
      .catch(() => []);
    return rows.map((r) => r.name).join(', ') || 'a mailbox';
  }

  /**
   * Merges the pending lists of a user's GIN indexes (after a bulk import), two indexes at a
   * time so both cores work. Searches are fast again afterwards.
   * @param {number} userId
   */
  async cleanGinPending(userId) {
    const queue = (await this.ginIndexes(userId)).map((x) => x.name);
    const worker = async () => {
      while (queue.length) {
        const name = queue.shift();
        await this.knex.raw('SELECT gin_clean_pending_list(?::regclass)', [name]);
      }
    };
    await Promise.all([worker(), worker()]);
  }

  /**
   * Rebuilds a user's GIN indexes, each in one pass over its table (REINDEX CONCURRENTLY:
   * searches and writes go on meanwhile). After a bulk import into an empty partition (the
   * importer's call): an index grown by merging pending lists batch after batch is 2-8 times the
   * size of one built in one pass (issue 30.6: the Enron set's trigram index 236 MB merged every
   * 2 MB of mail, 128 MB built). Two tables at a time, so both cores work; the indexes of one
   * table one after the other (a REINDEX CONCURRENTLY locks its table against another).
   * @param {number} userId
   */
  async rebuildGinIndexes(userId) {
    const byTable = new Map();
    for (const x of await this.ginIndexes(userId)) {
      if (!byTable.has(x.tbl)) byTable.set(x.tbl, []);
      byTable.get(x.tbl).push(x.name);
    }
    const queue = [...byTable.values()];
    const worker = async () => {
      while (queue.length) {
        // Catalog names as regclass prints them (quoted where needed): no user input here.
        for (const name of queue.shift()) await this.knex.raw(`REINDEX INDEX CONCURRENTLY ${name}`);
      }
    };
    await Promise.all([worker(), worker()]);
  }

  /** The GIN indexes of a user's partitions, largest first: {name, tbl}. */
  async ginIndexes(userId) {
    // Citus (citus.js): no per-user partitions; the shards' indexes are the workers' to keep.
    if (!(await perUserPartitions(this.knex))) return [];
    const r = await this.knex.raw(
      `SELECT c.oid::regclass::text AS name, x.indrelid::regclass::text AS tbl
         FROM pg_inherits i
         JOIN pg_class c ON c.oid = i.inhrelid
         JOIN pg_index x ON x.indexrelid = c.oid
         JOIN pg_am a ON a.oid = c.relam
        WHERE a.amname = 'gin' AND (c.relname LIKE ? OR c.relname LIKE ? OR c.relname LIKE ?)
        ORDER BY pg_relation_size(c.oid) DESC`,
      [
        `messages\\_u${Number(userId)}\\_%`,
        `message\\_words\\_u${Number(userId)}\\_%`,
        `message\\_chunks\\_u${Number(userId)}\\_%`,
      ],
    );
    return r.rows;
  }

  /**
   * Whether a user has no message rows at all (the importer's test for a bulk import).
   * @param {number} userId
   * @returns {Promise<boolean>}
   */
  async userHasNoMail(userId) {
    const r = await this.knex.raw('SELECT 1 FROM messages WHERE user_id = ? LIMIT 1', [userId]);
    return r.rows.length === 0;
  }

  /**
   * Writes the list view's snapshot of a mailbox now (list-cache.js writeSnapshot): the
   * importer's last step, so that the first open after an import reads one row. No-op without
   * a list view cache, or for a mailbox over its budget.
   * @param {number} userId
   * @param {number} mailboxId
   * @returns {Promise<boolean>} whether a snapshot was written
   */
  async writeListSnapshot(userId, mailboxId) {
    if (!this.listViewCache) return false;
    return this.listViewCache.writeSnapshot(this.knex, userId, mailboxId);
  }

  /**
   * Refreshes the planner statistics of a user's partitions. Run after a bulk import: a new
   * partition has none until autovacuum gets to it, and without them PostgreSQL plans word
   * and substring searches as sequential scans (100-600 ms instead of a few ms on 21k
   * messages).
   * With `keys`, only the columns a copy, move or purge changes the distribution of (user,
   * mailbox, uid, expunged) and the row counts: no text is read (stats-ops.js, after bulk
   * writes).
   * @param {number} userId
   * @param {{keys?: boolean}} [opts]
   */
  async analyzeUser(userId, opts = {}) {
    const id = Number(userId);
    if (!Number.isInteger(id) || id <= 0) throw new Error('invalid user id');
    // Citus (citus.js): a user shares a shard that already has statistics (no new partition
    // per user); the workers' autovacuum keeps them.
    if (!(await perUserPartitions(this.knex))) return;
    // Identifiers cannot be bound parameters; the id is an integer checked above.
    if (opts.keys) {
      const k = 'user_id, mailbox_id, uid';
      await this.knex.raw(
        `ANALYZE messages_u${id} (${k}, expunged), message_words_u${id} (${k}),
           message_chunks_u${id} (${k}), message_sources_u${id} (${k})`,
      );
      return;
    }
    await this.knex.raw(
      `ANALYZE messages_u${id}, message_words_u${id}, message_chunks_u${id}, message_sources_u${id}`,
    );
  }

  /**
   * VACUUM (ANALYZE) of a user's partitions: what autovacuum does some time after a bulk
   * import (its insert threshold), done now. The benchmark runs it after loading, untimed, so
   * that the autovacuum of a freshly imported partition (a pass over ~500 MB of trigram and
   * tsvector indexes on 21k messages) does not run beside the timed requests.
   * @param {number} userId
   */
  async vacuumUser(userId) {
    const id = Number(userId);
    if (!Number.isInteger(id) || id <= 0) throw new Error('invalid user id');
    if (!(await perUserPartitions(this.knex))) return; // Citus: as analyzeUser
    await this.knex.raw(
      `VACUUM (ANALYZE) messages_u${id}, message_words_u${id}, message_chunks_u${id}, message_sources_u${id}`,
    );
  }

  /**
   * Quarantined entries of a user (newest first).
   * @param {number} userId
   * @param {{source?: string, limit?: number}} [opts]
   */
  async listQuarantine(userId, opts = {}) {
    const q = this.knex('quarantine')
      .select('id', 'mailbox', 'source', 'position', 'reason', 'detail', 'created_at')
      .select(this.knex.raw('length(raw) AS size'))
      .where({ user_id: userId })
      .orderBy('id', 'desc')
      .limit(opts.limit || 1000);
    if (opts.source) q.andWhere({ source: opts.source });
    return q;
  }

  /**
   * The exact bytes an import kept in quarantine (one of listQuarantine's ids, of this user).
   * @param {number} userId
   * @param {number} id
   * @returns {Promise<Buffer>} QUARANTINE_NOT_FOUND when the user has no such entry
   */
  async quarantineRaw(userId, id) {
    const row = await this.knex('quarantine').select('raw').where({ user_id: userId, id }).first();
    if (!row) throw new errors.QUARANTINE_NOT_FOUND(String(id));
    return row.raw;
  }

  /**
   * Every quarantine entry of a user, oldest first, without the bytes: what an export reports
   * as not written (and fetches one by one with quarantineRaw when it writes them).
   * @param {number} userId
   * @returns {Promise<Array<{id: number, mailbox: string|null, position: string, createdAt: Date}>>}
   */
  async quarantineEntries(userId) {
    const rows = await this.knex('quarantine')
      .select('id', 'mailbox', 'position', 'created_at')
      .where({ user_id: userId })
      .orderBy('id');
    return rows.map((r) => ({
      id: Number(r.id),
      mailbox: r.mailbox,
      position: r.position,
      createdAt: r.created_at,
    }));
  }

  /**
   * The sources (absolute paths, or imap:// for IMAP) every import job of every user read:
   * what an export must never write over or into.
   * @returns {Promise<string[]>}
   */
  async importSources() {
    const rows = await this.knex('import_jobs').distinct('source');
    return rows.map((r) => r.source);
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

  outboxPending() {
    return mirror.outboxPending(this);
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
function knexLike(client) {
  return {
    raw(sql, bindings = []) {
      let n = 0;
      return client.query(
        sql.replace(/\?/g, () => `$${++n}`),
        bindings,
      );
    },
  };
}

async function lookupIn(knex, userId, mailboxId, items) {
  const r = await knex.raw(
    `SELECT m.content_hash, m.dup_index FROM messages m
       JOIN unnest(?::bytea[], ?::int[]) AS k(hash, dup)
         ON m.content_hash = k.hash AND m.dup_index = k.dup
      WHERE m.user_id = ? AND m.mailbox_id = ?`,
    [items.map((i) => i.hash), items.map((i) => i.dup), userId, mailboxId],
  );
  return new Set(r.rows.map((x) => `${x.content_hash.toString('hex')}:${x.dup_index}`));
}

/**
 * Gives a user's message partition planner statistics when it has none (never analyzed: a
 * new user's first import batch). Without them PostgreSQL takes the partition for a few rows
 * whatever it holds and plans the thread stage's lookups by (mailbox, uid) as scans of the
 * whole mailbox, per batch or per looked-up message. Only the key columns: a few ms. Runs in
 * the batch's transaction after the previous batch committed (its rows count, and no two
 * batches analyze at once).
 * @param {{query: Function}} client
 * @param {number} userId
 */
async function statsForNewPartition(client, userId) {
  const id = Number(userId);
  if (!Number.isInteger(id) || id <= 0) throw new Error('invalid user id');
  // Statistics rows, not pg_class.reltuples: ANALYZE in a transaction that rolls back (a
  // failed or killed first batch) keeps its reltuples but loses its pg_statistic rows, and
  // the partition would then never get statistics before the end of the import.
  const r = await client.query(
    // pg_stats, not pg_statistic: readable by a DATABASE_URL role that is not a superuser.
    `SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_stats s ON s.schemaname = n.nspname AND s.tablename = c.relname
      WHERE c.oid = $1::regclass LIMIT 1`,
    [`messages_u${id}`],
  );
  if (!r.rows.length) {
    await client.query(`ANALYZE messages_u${id} (user_id, mailbox_id, uid)`);
  }
}

function groupBy(items, fn) {
  const m = new Map();
  for (const it of items) {
    const k = fn(it);
    if (!m.has(k)) m.set(k, []);
    m.get(k).push(it);
  }
  return m;
}

module.exports = { PgStore };
