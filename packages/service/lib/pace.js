'use strict';

/*
 * The messages/s cap of a whole-server migration (MAILGATE_MIGRATE_RATE, issue 33.2): one
 * account's pace, the upstream host's rate shared by that host's accounts running now (on any
 * worker). Owns only the arithmetic of waiting; the clock, the sleep and the count of running
 * accounts are handed in, so the tests drive it with a clock of their own. Never touches the
 * store or a socket itself.
 *
 * Each account keeps a schedule (a virtual clock, as in GCRA): a batch of n messages fetched at
 * share s moves it on by n/s seconds from where it stood, or from when the batch began if the
 * account was behind; the run then sleeps until the schedule. So an account never goes faster
 * than its share of the moment, and time it spent slower is not saved up: when the host's
 * other account ends and the share grows, the pace grows, with no burst to "catch up" (the
 * first version measured the whole run against the new share, so an account that had run at
 * half the rate sent the other half at once). Over any stretch of time, what the host's
 * accounts fetch is at most rate × time plus one batch per account.
 */

/**
 * @param {object} o
 * @param {number} o.rate messages/s of the upstream host (0: no cap)
 * @param {number} o.perHost accounts of one host at a time (sizes batches for an even pace)
 * @param {number} o.batchSize the import's batch size without a cap
 * @param {() => Promise<number>} o.running accounts of the host running now (this one too)
 * @param {() => number} [o.now] milliseconds (default Date.now)
 * @param {(ms: number) => Promise<void>} [o.sleep] (default a timer)
 * @returns {{batchSize: number, after: (messages: number) => Promise<void>}}
 */
function createPacer(o) {
  const rate = Number(o.rate) || 0;
  const now = o.now || Date.now;
  const sleep = o.sleep || ((ms) => new Promise((r) => setTimeout(r, ms)));
  let schedule = now();
  let batchStart = schedule;
  return {
    // About a second's worth of the host's rate over its accounts; at least 10 messages.
    batchSize:
      rate > 0
        ? Math.max(10, Math.min(o.batchSize, Math.ceil(rate / Math.max(1, o.perHost))))
        : o.batchSize,
    /** Called after each batch with its message count: waits until the account is due. */
    async after(messages) {
      if (!(rate > 0) || !(messages > 0)) return;
      const share = rate / Math.max(1, await o.running());
      schedule = Math.max(schedule, batchStart) + (messages / share) * 1000;
      const wait = schedule - now();
      if (wait > 0) await sleep(wait);
      batchStart = now();
    },
  };
}

module.exports = { createPacer };
