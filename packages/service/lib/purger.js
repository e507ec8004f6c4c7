'use strict';

// Uids queued per mailbox before its purge falls back to a scan (memory bound).
const MAX_QUEUED_UIDS = 100000;

/**
 * Phase two of expunge, in the background: mailboxes with hidden rows are queued and purged
 * one at a time (store.purgeExpunged deletes in small batches). Failures (e.g. PostgreSQL
 * restarting) keep the mailbox queued and retry later; nothing is lost because the hidden
 * rows stay marked in the database, and pendingPurges() finds them again after a restart.
 */
class Purger {
  /**
   * @param {object} store PgStore
   * @param {import('pino').Logger} log
   * @param {{retryMs?: number, batchSize?: number}} [opts]
   */
  constructor(store, log, opts = {}) {
    this.store = store;
    this.log = log;
    this.retryMs = opts.retryMs || 5000;
    this.batchSize = opts.batchSize || 500;
    this.queue = new Map();
    this.running = null;
    this.timer = null;
    this.ac = new AbortController();
    this.purged = 0;
  }

  /**
   * Queues a mailbox; the purge starts on the next turn of the event loop. With the uids an
   * expunge hid, the purge finds its rows by the primary key; without (a restart's
   * pendingPurges), or once a mailbox's queued uids exceed MAX_QUEUED_UIDS, it looks for every
   * hidden row of the mailbox, a scan of the user's partition (0.09-1.4 s for 1% of the large
   * Enron mailbox and a copy of it, against a few ms by uid: issue 35.4).
   * @param {number} userId
   * @param {number} mailboxId
   * @param {number[]|null} [uids] the uids hidden, when the caller knows them
   */
  schedule(userId, mailboxId, uids = null) {
    if (this.ac.signal.aborted) return;
    this.enqueue({ userId, mailboxId, uids: uids ? new Set(uids.map(Number)) : null });
    this.kick();
  }

  /** Adds a job to the queue, merged with the mailbox's queued one (null uids: a scan). */
  enqueue(job) {
    const key = `${job.userId}:${job.mailboxId}`;
    const old = this.queue.get(key);
    let uids = job.uids;
    if (old) {
      if (!old.uids || !uids) uids = null;
      else for (const u of uids) old.uids.add(u);
      if (uids) uids = old.uids;
    }
    if (uids && uids.size > MAX_QUEUED_UIDS) uids = null;
    this.queue.set(key, { userId: job.userId, mailboxId: job.mailboxId, uids });
  }

  kick() {
    if (this.running || this.timer || this.ac.signal.aborted) return;
    this.running = this.run().finally(() => {
      this.running = null;
    });
  }

  async run() {
    await new Promise((r) => setImmediate(r));
    while (this.queue.size && !this.ac.signal.aborted) {
      const [key, job] = this.queue.entries().next().value;
      // Taken off the queue before it runs: an expunge scheduled meanwhile queues anew.
      this.queue.delete(key);
      try {
        const n = await this.store.purgeExpunged(job.userId, job.mailboxId, {
          batchSize: this.batchSize,
          signal: this.ac.signal,
          uids: job.uids ? [...job.uids] : undefined,
        });
        this.purged += n;
        if (this.ac.signal.aborted) this.enqueue(job);
        if (n) this.log.debug({ userId: job.userId, mailboxId: job.mailboxId, n }, 'purged');
      } catch (err) {
        this.enqueue(job);
        this.log.warn({ err: { message: err.message, code: err.code } }, 'purge failed; retrying');
        this.timer = setTimeout(() => {
          this.timer = null;
          this.kick();
        }, this.retryMs);
        this.timer.unref();
        return;
      }
    }
  }

  /** Resolves when the queue is empty (tests, shutdown). */
  async idle() {
    while (this.running) await this.running;
  }

  /** Stops after the current batch; unpurged rows stay hidden and are found at next start. */
  async close() {
    this.ac.abort();
    if (this.timer) clearTimeout(this.timer);
    await this.idle();
  }
}

module.exports = { Purger };
