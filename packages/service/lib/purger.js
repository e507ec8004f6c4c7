'use strict';

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

  /** Queues a mailbox; the purge starts on the next turn of the event loop. */
  schedule(userId, mailboxId) {
    if (this.ac.signal.aborted) return;
    this.queue.set(`${userId}:${mailboxId}`, { userId, mailboxId });
    this.kick();
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
      try {
        const n = await this.store.purgeExpunged(job.userId, job.mailboxId, {
          batchSize: this.batchSize,
          signal: this.ac.signal,
        });
        this.purged += n;
        if (!this.ac.signal.aborted) this.queue.delete(key);
        if (n) this.log.debug({ userId: job.userId, mailboxId: job.mailboxId, n }, 'purged');
      } catch (err) {
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
