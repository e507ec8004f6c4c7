'use strict';

/*
 * Background upkeep of a user's GIN indexes after new mail (issue 32: the delivery p99). It
 * owns when a user's pending lists are merged; the merge itself is the store's
 * (cleanGinPending). It must never run inside a caller's write or make one wait.
 *
 * Why: a new message's entries in the GIN indexes (trigrams of from/to/cc/subject, the words,
 * the vocabulary's words; until 2026-11-28 the text pieces' trigrams) go to each index's
 * pending list (fastupdate), which is cheap; the insert that takes a list past
 * gin_pending_list_limit (4 MB) merges the whole list into the index before its own statement
 * ends. For the text pieces' trigram index that is about 150
 * Enron messages (8 MB of list took 0.16 s of CPU to merge, and up to 2.8 s of wall time on the
 * loaded machine): one delivery in ~150 waited for it (the p99 of 272 ms in
 * bench/results/deliver-2026-11-27.md). `fastupdate = off` instead gave a p99 of 336 ms at
 * +40% PostgreSQL CPU (docs/benchmarks.md).
 *
 * So each table's indexes are merged here, on a connection of their own while deliveries go
 * on, when the new mail since their last merge has filled their lists to about 60% of the
 * limit (MERGE_AFTER: bytes of raw mail, from the list growth measured on Enron mail: text
 * pieces 9-13 bytes of list per byte of mail, words ~2, each header trigram index under 0.6).
 * PostgreSQL's merge locks the list's head, not the index: inserts keep appending, and an
 * insert that passes the limit while a merge runs skips its own. Merging later rather than
 * sooner matters: a merge costs per distinct key, so merging every index after each 256 KiB
 * of mail cost ~2 ms more PostgreSQL CPU per delivery (three interleaved runs) than the
 * inserts' own merges at the limit did. These thresholds still cost CPU (bench A/B,
 * docs/benchmarks.md: +0.6 ms per generated message, +2.1 ms per corpus message, where the
 * inserts had merged only the text pieces' index): the price of the tail.
 *
 * The append's transaction raises the limit to 8 MB (store append-ops.js APPEND_PENDING_LIMIT),
 * so the text pieces' lists are merged here at about the old limit instead of at 60% of it: a
 * merge costs a fixed part plus a part per distinct key, and on Enron mail merging after ~200
 * messages instead of 50-80 costs ~1.5 instead of ~3 ms a message
 * (bench/results/deliver-2026-11-28-profile.md). The price: a substring search reads the
 * pending list whole, about 0.2 ms a page on the loaded machine, so a search just before a merge
 * reads up to ~4 MB of list (~90 ms) where it read ~1.8 MB.
 *
 * One process's view: several processes (serve, lmtp, `mailgate deliver`) each count what they
 * wrote, and mail unlike Enron's fills lists at other rates; when a list passes the limit
 * first, the insert that passes it merges, as before. A process no upkeep watches (`mailgate
 * deliver`, one message per process) still raises the limit: its lists grow to 8 MB and the
 * delivery that passes it merges 8 MB inline, and a search meanwhile reads up to 8 MB of list.
 */

/** New mail (bytes) after which each table's GIN indexes of the user are merged. */
const MERGE_AFTER = Object.freeze({
  // (message_chunks: 448 KiB, until its trigram index was dropped by
  // 20261203310100_word_vocabulary.js: substring search reads the word vocabulary now.)
  message_words: 1280 * 1024,
  // The vocabulary's trigram index (each user's words, once): its list grows only by words new
  // to the user, slower than the words' own list, so it is merged with them. Until merged, a
  // substring search reads the list whole (review finding F5: it had no entry, and its list
  // was merged only by an insert at the append's 8 MB limit).
  message_vocab: 1280 * 1024,
  messages: 4096 * 1024,
});

class IndexUpkeep {
  /**
   * @param {import('@mailgate/store').PgStore} store
   * @param {import('pino').Logger} log
   * @param {{mergeAfter?: Record<string, number>}} [opts]
   */
  constructor(store, log, opts = {}) {
    this.store = store;
    this.log = log;
    this.mergeAfter = opts.mergeAfter || MERGE_AFTER;
    /** @type {Map<number, Record<string, number>>} user → table → bytes since its last merge */
    this.users = new Map();
    /** @type {Map<number, Set<string>>} user → tables to merge */
    this.queue = new Map();
    this.running = null;
    this.closed = false;
    /** Merges run and pending-list pages merged (tests, logs). */
    this.runs = 0;
    this.pages = 0;
  }

  /**
   * Notes new mail of a user (after its commit). Never waits: a merge is only queued.
   * @param {number} userId
   * @param {number} bytes
   */
  wrote(userId, bytes) {
    if (this.closed) return;
    let u = this.users.get(userId);
    if (!u) this.users.set(userId, (u = {}));
    const due = [];
    for (const [table, after] of Object.entries(this.mergeAfter)) {
      u[table] = (u[table] || 0) + bytes;
      if (u[table] >= after) {
        u[table] = 0;
        due.push(table);
      }
    }
    if (!due.length) return;
    if (!this.queue.has(userId)) this.queue.set(userId, new Set());
    for (const t of due) this.queue.get(userId).add(t);
    if (!this.running) {
      this.running = this.run().finally(() => {
        this.running = null;
      });
    }
  }

  async run() {
    while (this.queue.size && !this.closed) {
      const [userId, tables] = this.queue.entries().next().value;
      this.queue.delete(userId);
      try {
        // One index after the other: the second core stays with the deliveries.
        this.pages += await this.store.cleanGinPending(userId, {
          workers: 1,
          tables: [...tables],
        });
        this.runs++;
      } catch (err) {
        // Nothing is lost: the lists stay, and the insert that passes the limit merges them.
        this.log.warn(
          { err: { message: err.message, code: err.code }, userId },
          'GIN merge failed',
        );
      }
    }
  }

  /** Resolves when no merge runs or is queued (tests, shutdown). */
  async idle() {
    while (this.running) await this.running;
  }

  /** Stops: queued merges dropped, the one in progress finished. */
  async close() {
    this.closed = true;
    this.queue.clear();
    await this.idle();
  }
}

module.exports = { IndexUpkeep, MERGE_AFTER };
