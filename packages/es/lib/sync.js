'use strict';

const { toDoc } = require('./docs');
const { storeOf } = require('./store-of');
const { docId } = require('./mapping');
const { writeTargets, setRefresh, unavailable } = require('./indices');

/*
 * The outbox worker. One drain step, in ONE PostgreSQL transaction (@mailgate/store
 * drainOutbox, which owns the SQL):
 *   1. take the drainer lock (pg_try_advisory_xact_lock): one drainer at a time, cluster-wide,
 *      so `mailgate serve` and `mailgate es sync` never race each other; `es reindex` takes
 *      the same lock as a barrier (store outboxBarrier, see reindex.js);
 *   2. read the oldest outbox rows (id order);
 *   3. read the messages' current rows and send one `_bulk` per ~16 MB: `index` with
 *      version_type=external and version=modseq, or `delete` (expunged or purged rows);
 *   4. delete the outbox rows — only when every item was acknowledged — and COMMIT.
 * A crash at any point leaves the rows in the outbox; the next drain re-sends them, and ES
 * answers 409 (version conflict) for what it already has: a change is never lost and never
 * applied twice (the document's _version is the modseq of its last change, exactly once).
 */

const BATCH_ROWS = 5000;
const BULK_BYTES = 16 * 1024 * 1024;
// A backlog this big is a bulk load: refresh is switched off until it is drained.
const BIG_BACKLOG = 20000;

/**
 * Ships one batch of outbox rows.
 * @param {{store: import('@mailgate/store').PgStore, client: import('@elastic/elasticsearch').Client, prefix: string, log?: object, batchRows?: number, onBulk?: () => void}} ctx
 * @returns {Promise<{busy?: boolean, rows: number, indexed: number, deleted: number, skipped: number}>}
 */
async function drainOnce(ctx) {
  const { client, prefix } = ctx;
  const none = { rows: 0, indexed: 0, deleted: 0, skipped: 0 };
  const r = await storeOf(ctx).drainOutbox(ctx.batchRows || BATCH_ROWS, async (rows, loadRows) => {
    const stats = { indexed: 0, deleted: 0, skipped: 0 };
    // Last row per message wins: the document is built from the current state anyway.
    const byUser = new Map();
    for (const r of rows) {
      if (!byUser.has(r.user_id)) byUser.set(r.user_id, new Map());
      const k = docId(r.mailbox_id, r.uid);
      const prev = byUser.get(r.user_id).get(k);
      const modseq = Math.max(Number(r.modseq), prev ? prev.modseq : 0);
      byUser.get(r.user_id).set(k, { mailboxId: r.mailbox_id, uid: Number(r.uid), modseq });
    }
    const targets = await writeTargets(client, prefix, [...byUser.keys()]);

    let ops = [];
    let bytes = 0;
    const flush = async () => {
      if (!ops.length) return;
      const body = ops;
      ops = [];
      bytes = 0;
      if (ctx.onBulk) ctx.onBulk();
      const res = await client.bulk({ operations: body, refresh: false });
      checkBulk(res, stats);
    };
    for (const [userId, docs] of byUser) {
      const keys = [...docs.values()];
      const current = new Map(
        (await loadRows(userId, keys)).map((row) => [docId(row.mailbox_id, row.uid), row]),
      );
      for (const [id, key] of docs) {
        const row = current.get(id);
        for (const index of targets.get(userId)) {
          if (row && !row.expunged) {
            const doc = toDoc(userId, row);
            const json = JSON.stringify(doc);
            ops.push(
              { index: { _index: index, _id: id, version: doc.modseq, version_type: 'external' } },
              json,
            );
            bytes += json.length;
          } else {
            // Expunged (hidden) or already purged: the document goes.
            const version = Math.max(key.modseq, row ? Number(row.modseq) : 0);
            ops.push({ delete: { _index: index, _id: id, version, version_type: 'external' } });
          }
          if (bytes >= BULK_BYTES) await flush();
        }
      }
    }
    await flush();
    if (ctx.afterBulk) await ctx.afterBulk();
    return stats;
  });
  return { ...none, ...r };
}

/**
 * Accepts a bulk answer only when every item is acknowledged. 409 means ES already holds that
 * version or a newer one (a replay after a crash, or a reindex that got there first); a 404
 * on delete means there was nothing to delete. Anything else fails the whole batch, which is
 * then retried: the rows stay in the outbox.
 */
function checkBulk(res, stats) {
  let failed = null;
  for (const item of res.items) {
    const [op, r] = Object.entries(item)[0];
    if (r.status >= 200 && r.status < 300) {
      if (op === 'delete') stats.deleted++;
      else stats.indexed++;
    } else if (r.status === 409 || (op === 'delete' && r.status === 404)) {
      stats.skipped++;
    } else if (!failed) {
      failed = r;
    }
  }
  if (failed) {
    const reason = failed.error ? `${failed.error.type}: ${failed.error.reason}` : failed.status;
    const err = new Error(`bulk item failed (${failed.status}): ${reason}`);
    err.status = failed.status;
    throw err;
  }
}

const sleep = (ms, signal) =>
  new Promise((resolve) => {
    const done = () => {
      clearTimeout(t);
      if (signal) signal.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    if (signal) signal.addEventListener('abort', done, { once: true });
  });

/** Exponential backoff with jitter: 0.5 s, 1 s, 2 s … capped at 30 s. */
function backoff(attempt) {
  const base = Math.min(30000, 500 * 2 ** Math.min(attempt, 10));
  return base / 2 + Math.random() * (base / 2);
}

/**
 * Outbox rows waiting.
 * @param {object} ctx a mirror context, a PgStore or a knex
 * @returns {Promise<number>}
 */
async function pending(ctx) {
  return storeOf(ctx).outboxPending();
}

/**
 * Drains the outbox until it is empty (`mailgate es sync`), retrying failures with backoff.
 * A big backlog is loaded with refresh switched off, then refresh is restored and run once.
 * @param {{store: import('@mailgate/store').PgStore, client: import('@elastic/elasticsearch').Client, prefix: string, log?: object, maxAttempts?: number, signal?: AbortSignal, onProgress?: (s: object) => void}} ctx
 * @returns {Promise<{rows: number, indexed: number, deleted: number, skipped: number, batches: number, seconds: number, rate: number, pending: number}>}
 */
async function syncAll(ctx) {
  const t0 = Date.now();
  const total = { rows: 0, indexed: 0, deleted: 0, skipped: 0, batches: 0 };
  const maxAttempts = ctx.maxAttempts == null ? 6 : ctx.maxAttempts;
  const big = (await pending(ctx)) >= BIG_BACKLOG;
  let attempt = 0;
  try {
    if (big) await setRefresh(ctx.client, ctx.prefix, '-1').catch(() => {});
    for (;;) {
      if (ctx.signal && ctx.signal.aborted) break;
      let r;
      try {
        r = await drainOnce(ctx);
        attempt = 0;
      } catch (err) {
        attempt++;
        if (attempt >= maxAttempts) throw unavailable(err);
        const wait = backoff(attempt);
        if (ctx.log) ctx.log.warn({ err: { message: err.message }, wait }, 'es sync retrying');
        await sleep(wait, ctx.signal);
        continue;
      }
      if (r.busy) {
        // Another drainer (mailgate serve) holds the lock: wait for it rather than spin.
        await sleep(200, ctx.signal);
        if ((await pending(ctx)) === 0) break;
        continue;
      }
      if (!r.rows) break;
      for (const k of ['rows', 'indexed', 'deleted', 'skipped']) total[k] += r[k];
      total.batches++;
      if (ctx.onProgress) ctx.onProgress({ ...total });
    }
  } finally {
    if (big) await setRefresh(ctx.client, ctx.prefix, '1s').catch(() => {});
  }
  await ctx.client.indices
    .refresh({ index: `${ctx.prefix}-u*`, allow_no_indices: true, ignore_unavailable: true })
    .catch(() => {});
  const seconds = (Date.now() - t0) / 1000;
  return {
    ...total,
    seconds,
    rate: seconds ? Math.round(total.rows / seconds) : 0,
    pending: await pending(ctx),
  };
}

/**
 * The background worker of `mailgate serve`: drains continuously, polls an empty outbox
 * every `intervalMs`, backs off exponentially while ES (or PostgreSQL) is unreachable.
 */
class EsWorker {
  /**
   * @param {{store: import('@mailgate/store').PgStore, client: import('@elastic/elasticsearch').Client, prefix: string, log: object, intervalMs?: number}} ctx
   */
  constructor(ctx) {
    this.ctx = ctx;
    this.ac = new AbortController();
    this.running = null;
    this.shipped = 0;
  }

  /** Starts the loop (idempotent). */
  start() {
    if (!this.running) this.running = this.loop();
    return this;
  }

  async loop() {
    const { log } = this.ctx;
    const signal = this.ac.signal;
    let attempt = 0;
    let bulkMode = false;
    // A process killed during a big drain leaves refresh off: switch it back on.
    await setRefresh(this.ctx.client, this.ctx.prefix, '1s').catch(() => {});
    await this.upgrade(signal);
    while (!signal.aborted) {
      try {
        if (!bulkMode && (await pending(this.ctx)) >= BIG_BACKLOG) {
          await setRefresh(this.ctx.client, this.ctx.prefix, '-1');
          bulkMode = true;
        }
        const r = await drainOnce(this.ctx);
        attempt = 0;
        this.shipped += r.rows;
        if (r.rows) continue;
        if (bulkMode) {
          await setRefresh(this.ctx.client, this.ctx.prefix, '1s');
          bulkMode = false;
        }
        await sleep(this.ctx.intervalMs || 1000, signal);
      } catch (err) {
        attempt++;
        const wait = backoff(attempt);
        log.warn({ err: { message: err.message }, attempt, wait }, 'es outbox drain failed');
        await sleep(wait, signal);
      }
    }
    if (bulkMode) await setRefresh(this.ctx.client, this.ctx.prefix, '1s').catch(() => {});
  }

  /**
   * Rebuilds indexes of an older mapping version before draining (retried with backoff while
   * ES is unreachable). Required here, not at load: reindex.js requires this module.
   */
  async upgrade(signal) {
    const { upgradeIndexes } = require('./reindex');
    for (let attempt = 1; !signal.aborted; attempt++) {
      try {
        this.upgraded = await upgradeIndexes(this.ctx);
        return;
      } catch (err) {
        const wait = backoff(attempt);
        this.ctx.log.warn({ err: { message: err.message }, attempt, wait }, 'es upgrade failed');
        await sleep(wait, signal);
      }
    }
  }

  /** Stops after the current batch (its rows commit or stay queued). */
  async stop() {
    this.ac.abort();
    if (this.running) await this.running;
  }
}

module.exports = { drainOnce, syncAll, pending, EsWorker, backoff };
