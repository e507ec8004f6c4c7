'use strict';

// The thread side of ./bounded-pool.js: runs the pool's handler over each posted item and
// says in shared memory which item it is on, so that the pool can name the offender when
// this thread is terminated (time budget) or dies (heap limit). Never touches I/O.

const { parentPort, workerData } = require('node:worker_threads');

const handler = require(workerData.module);
const state = new Int32Array(workerData.state);
// Loaded: from now on the pool's watchdog counts time (thread start-up, which under CPU
// contention can take seconds, is not a message's parse time).
Atomics.store(state, 2, 1);

parentPort.on('message', ({ id, items, opts }) => {
  const results = new Array(items.length);
  for (let i = 0; i < items.length; i++) {
    Atomics.store(state, 0, i);
    Atomics.add(state, 1, 1);
    results[i] = handler.handle(items[i], opts);
  }
  Atomics.store(state, 0, -1);
  Atomics.add(state, 1, 1);
  parentPort.postMessage({ id, results });
});
