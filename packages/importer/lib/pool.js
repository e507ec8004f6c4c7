'use strict';

const path = require('node:path');
const { Worker } = require('node:worker_threads');
const { deriveRow } = require('./derive');

/**
 * A small pool of parse workers. Parsing is CPU-bound and synchronous; the main thread keeps
 * reading sources and talking to PostgreSQL while workers parse. size 0 parses inline.
 */
class ParsePool {
  /** @param {number} size */
  constructor(size) {
    this.size = size;
    this.workers = [];
    this.pending = new Map();
    this.nextId = 1;
    for (let i = 0; i < size; i++) {
      // A small young generation keeps each worker's heap (and so the import's RSS) tight:
      // parse results are short-lived and copied out at once.
      const w = new Worker(path.join(__dirname, 'worker.js'), {
        resourceLimits: { maxYoungGenerationSizeMb: 8 },
      });
      w.on('message', ({ id, results }) => {
        const p = this.pending.get(id);
        this.pending.delete(id);
        p.resolve(results);
      });
      w.on('error', (err) => {
        for (const p of this.pending.values()) p.reject(err);
        this.pending.clear();
      });
      w.unref();
      this.workers.push(w);
    }
    this.rr = 0;
  }

  /**
   * @param {Buffer[]} raws
   * @returns {Promise<Array<ReturnType<typeof deriveRow>>>} in input order
   */
  async parseAll(raws) {
    if (this.size === 0 || raws.length === 0) return raws.map(deriveRow);
    const parts = Math.min(this.size, raws.length);
    const per = Math.ceil(raws.length / parts);
    const jobs = [];
    for (let i = 0; i < raws.length; i += per) {
      const slice = raws.slice(i, i + per);
      const w = this.workers[this.rr++ % this.workers.length];
      const id = this.nextId++;
      jobs.push(
        new Promise((resolve, reject) => {
          this.pending.set(id, { resolve, reject });
          w.postMessage({ id, raws: slice });
        }),
      );
    }
    return (await Promise.all(jobs)).flat();
  }

  async close() {
    await Promise.all(this.workers.map((w) => w.terminate()));
    this.workers = [];
  }
}

module.exports = { ParsePool };
