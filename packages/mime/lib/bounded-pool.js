'use strict';

// Worker threads with a budget per item: the one place where mail is parsed off the calling
// thread (import parsing, message rendering). Owns the hard half of the parse budget: a
// thread that stays on one item past the time budget is terminated, a thread that runs out
// of its capped heap dies; either way the item in flight is answered 'too-complex', the
// thread is replaced and the rest of its batch is retried without the offender. Threads are
// ref'd only while they hold work: in-flight work keeps the process alive (issue 15.1: an
// unref'd parse let Node exit 0 mid-import), an idle pool does not.

const path = require('node:path');
const { Worker } = require('node:worker_threads');

const DEFAULT_TIME_MS = 2000;
const DEFAULT_MEMORY_MB = 256;

/**
 * @typedef {object} BoundedPoolOptions
 * @property {string} module absolute path of a module exporting `handle(item, opts)`
 *   (synchronous; must catch its own errors and return a structured-cloneable result)
 * @property {number} [size=1] threads; 0 runs the handler inline (no hard budget)
 * @property {number} [timeMs=2000] per item; 0 = no limit
 * @property {number} [memoryMb=256] old-generation heap cap per thread (V8 heap, not Buffers)
 * @property {number} [youngMb] young-generation size per thread
 * @property {(item: any, detail: string, reason: string) => any} [onBudget] the result for an
 *   item over budget (reason 'too-complex') or whose thread failed otherwise ('parse-failed');
 *   default `{ok: false, reason, detail}`
 */

// A thread that has not loaded after this long is treated as failed (see check()).
const STARTUP_LIMIT_MS = 60000;

class BoundedPool {
  /** @param {BoundedPoolOptions} opts */
  constructor(opts) {
    this.module = opts.module;
    this.size = opts.size ?? 1;
    this.timeMs = opts.timeMs ?? DEFAULT_TIME_MS;
    this.memoryMb = opts.memoryMb ?? DEFAULT_MEMORY_MB;
    this.youngMb = opts.youngMb;
    this.onBudget = opts.onBudget || ((item, detail, reason) => ({ ok: false, reason, detail }));
    this.threads = [];
    this.queue = [];
    this.nextId = 1;
    this.closed = false;
    this.watchdog = null;
    this.replaced = 0;
    if (this.size === 0) this.inline = require(this.module);
  }

  /** Threads are started on first use, so a pool that is never used costs nothing. */
  spawn() {
    // [item index, progress counter, loaded flag] (bounded-worker.js)
    const state = new Int32Array(new SharedArrayBuffer(12));
    const resourceLimits = {};
    if (this.memoryMb > 0) resourceLimits.maxOldGenerationSizeMb = this.memoryMb;
    if (this.youngMb) resourceLimits.maxYoungGenerationSizeMb = this.youngMb;
    const w = new Worker(path.join(__dirname, 'bounded-worker.js'), {
      workerData: { module: this.module, state: state.buffer },
      resourceLimits,
    });
    const t = { w, state, job: null, seq: 0, since: 0, born: Date.now(), dead: false };
    w.on('message', ({ id, results }) => {
      const job = t.job;
      if (!job || job.id !== id) return;
      t.job = null;
      w.unref();
      for (let i = 0; i < results.length; i++) job.out[job.idx[i]] = results[i];
      job.done();
      this.dispatch();
    });
    w.on('error', (err) => this.fail(t, err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'memory' : err));
    w.on('exit', () => this.fail(t, 'exit'));
    w.unref();
    return t;
  }

  /**
   * Runs the handler over every item; resolves with the results in input order. An item
   * over budget gets `onBudget(item, why)` instead of a result.
   *
   * @param {any[]} items
   * @param {object} [opts] passed to the handler with each item
   * @returns {Promise<any[]>}
   */
  run(items, opts = {}) {
    if (this.closed) return Promise.reject(new Error('BoundedPool is closed'));
    if (items.length === 0) return Promise.resolve([]);
    if (this.size === 0) return Promise.resolve(items.map((it) => this.inline.handle(it, opts)));
    const out = new Array(items.length);
    const parts = Math.min(this.size, items.length);
    const per = Math.ceil(items.length / parts);
    const jobs = [];
    for (let i = 0; i < items.length; i += per) {
      const idx = [];
      for (let k = i; k < Math.min(items.length, i + per); k++) idx.push(k);
      jobs.push(idx);
    }
    return new Promise((resolve) => {
      let left = jobs.length;
      const done = () => {
        if (--left === 0) resolve(out);
      };
      for (const idx of jobs) {
        this.queue.push({ id: 0, items: idx.map((k) => items[k]), idx, out, opts, done });
      }
      this.dispatch();
    });
  }

  dispatch() {
    if (this.closed) return;
    while (this.queue.length) {
      let t = this.threads.find((x) => !x.job && !x.dead);
      if (!t) {
        if (this.threads.length >= this.size) break;
        t = this.spawn();
        this.threads.push(t);
      }
      const job = this.queue.shift();
      job.id = this.nextId++;
      t.job = job;
      t.seq = Atomics.load(t.state, 1);
      t.since = Date.now();
      t.w.ref();
      t.w.postMessage({ id: job.id, items: job.items, opts: job.opts });
    }
    this.armWatchdog();
  }

  armWatchdog() {
    const busy = this.threads.some((t) => t.job);
    if (busy && !this.watchdog && this.timeMs > 0) {
      const every = Math.max(10, Math.min(250, Math.floor(this.timeMs / 4)));
      this.watchdog = setInterval(() => this.check(), every);
    } else if (!busy && this.watchdog) {
      clearInterval(this.watchdog);
      this.watchdog = null;
    }
  }

  check() {
    const now = Date.now();
    for (const t of this.threads) {
      if (!t.job || t.dead) continue;
      const seq = Atomics.load(t.state, 1);
      if (Atomics.load(t.state, 2) === 0 && now - t.born < STARTUP_LIMIT_MS) {
        // Still loading its modules: not yet parsing anything, so nothing is over budget.
        t.since = now;
      } else if (seq !== t.seq) {
        t.seq = seq;
        t.since = now;
      } else if (now - t.since > this.timeMs) {
        this.fail(t, 'time');
      }
    }
    this.armWatchdog();
  }

  /** A thread died or overran: answer its item in flight, replace it, retry the rest. */
  fail(t, why) {
    if (t.dead) return;
    t.dead = true;
    this.threads = this.threads.filter((x) => x !== t);
    t.w.terminate().catch(() => {});
    this.replaced++;
    const job = t.job;
    t.job = null;
    if (job && !this.closed) {
      let at = Atomics.load(t.state, 0);
      if (at < 0 || at >= job.items.length) at = job.items.length - 1;
      const detail =
        why === 'time'
          ? `over the parse time budget of ${this.timeMs} ms`
          : why === 'memory'
            ? `over the parse memory budget of ${this.memoryMb} MB`
            : `parse thread failed: ${why && why.message ? why.message : why}`;
      const reason = why === 'time' || why === 'memory' ? 'too-complex' : 'parse-failed';
      job.out[job.idx[at]] = this.onBudget(job.items[at], detail, reason);
      const rest = job.idx.filter((_, i) => i !== at);
      if (rest.length) {
        const items = job.items.filter((_, i) => i !== at);
        this.queue.unshift({ ...job, id: 0, items, idx: rest });
      } else {
        job.done();
      }
    }
    this.dispatch();
  }

  /** Terminates every thread; pending work is dropped. */
  async close() {
    this.closed = true;
    if (this.watchdog) clearInterval(this.watchdog);
    this.watchdog = null;
    const threads = this.threads;
    this.threads = [];
    for (const t of threads) t.dead = true;
    await Promise.all(threads.map((t) => t.w.terminate()));
  }
}

module.exports = { BoundedPool, DEFAULT_TIME_MS, DEFAULT_MEMORY_MB };
