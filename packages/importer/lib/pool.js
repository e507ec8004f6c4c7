'use strict';

const path = require('node:path');
const { BoundedPool } = require('@mailgate/mime');
const { loadConfig } = require('@mailgate/core');

/**
 * The import's parse workers. Parsing is CPU-bound and synchronous; the main thread keeps
 * reading sources and talking to PostgreSQL while workers parse. Each message has a parse
 * budget (time, heap): a message over it comes back as `{ok: false, reason: 'too-complex'}`
 * and is quarantined (kept raw, byte-exact) instead of blocking the batch; a worker that
 * overran or ran out of heap is replaced and its batch retried without the offender. Workers
 * hold the process open while they have work, so an import cannot end silently mid-batch
 * (issue 15.1). size 0 parses inline, with the cooperative time check only.
 */
class ParsePool {
  /**
   * @param {number} size
   * @param {{timeMs?: number, memoryMb?: number}} [budget] per message; default from the
   *   configuration (MAILGATE_PARSE_TIME_MS, MAILGATE_PARSE_MEMORY_MB)
   */
  constructor(size, budget) {
    if (!budget) {
      const c = loadConfig();
      budget = { timeMs: c.parseTimeMs, memoryMb: c.parseMemoryMb };
    }
    this.size = size;
    this.pool = new BoundedPool({
      module: path.join(__dirname, 'derive.js'),
      size,
      timeMs: budget.timeMs,
      memoryMb: budget.memoryMb,
      // A small young generation keeps each worker's heap (and so the import's RSS) tight:
      // parse results are short-lived and copied out at once.
      youngMb: 8,
    });
  }

  /**
   * @param {Buffer[]} raws
   * @returns {Promise<Array<ReturnType<import('./derive').deriveRow>>>} in input order
   */
  parseAll(raws) {
    return this.pool.run(raws, { timeBudgetMs: this.pool.timeMs });
  }

  /** Threads replaced so far (over budget or crashed). */
  get replaced() {
    return this.pool.replaced;
  }

  async close() {
    await this.pool.close();
  }
}

module.exports = { ParsePool };
