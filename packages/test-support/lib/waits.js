'use strict';

/*
 * Waiting in tests without bounding a duration from above: `until` asserts that an event
 * happens (polling, a generous ~10 s), `within` turns a hang into a failing assertion that
 * names what never happened, so a test never blocks Jest.
 */

/**
 * Polls until cond() holds.
 * @param {() => boolean|Promise<boolean>} cond
 * @param {{tries?: number, everyMs?: number}} [opts] 200 tries every 50 ms by default
 * @returns {Promise<boolean>} false when it never held
 */
async function until(cond, opts = {}) {
  const tries = opts.tries || 200;
  for (let i = 0; i < tries; i++) {
    if (await cond()) return true;
    await new Promise((r) => setTimeout(r, opts.everyMs || 50));
  }
  return false;
}

/**
 * p, or a rejection naming what never happened after `ms` (default 20 s).
 * @template T
 * @param {Promise<T>} p
 * @param {string} what
 * @param {number} [ms]
 * @returns {Promise<T>}
 */
function within(p, what, ms = 20000) {
  let timer;
  const never = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  });
  return Promise.race([p, never]).finally(() => clearTimeout(timer));
}

module.exports = { until, within };
