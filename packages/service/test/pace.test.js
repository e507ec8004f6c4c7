'use strict';

/*
 * The migration's messages/s cap (MAILGATE_MIGRATE_RATE, pace.js) on a clock of the test's
 * own: sleeping moves the clock, fetching a batch takes the time the test says. What is
 * checked is the cap's promise: in any window of time an upstream host gives at most
 * rate × window plus one batch per account running on it, and an account that ran alone for
 * the whole run took at least messages / rate.
 */

const { createPacer } = require('../lib/pace');

/** A clock that only moves when told (sleep, or the time a fetch takes). */
function fakeClock() {
  const c = { t: 0 };
  c.now = () => c.t;
  c.sleep = async (ms) => {
    c.t += ms;
  };
  return c;
}

/**
 * Runs accounts of one host on the fake clock, interleaved by their next due time (as the
 * event loop would): each fetches a batch (taking fetchMs), then the pacer decides its wait.
 * Returns every batch as {account, at (end of the fetch), n}.
 */
async function runHost({ rate, perHost, accounts, fetchMs }) {
  const clock = fakeClock();
  const log = [];
  const ends = [];
  let running = accounts.length;
  const state = accounts.map((messages, i) => ({
    i,
    left: messages,
    due: 0,
    pacer: null,
  }));
  for (const s of state) {
    s.pacer = createPacer({
      rate,
      perHost,
      batchSize: 1000,
      running: async () => running,
      now: clock.now,
      // Each account sleeps on its own timeline: it becomes due at now + ms.
      sleep: async (ms) => {
        s.due = clock.t + ms;
      },
    });
  }
  for (;;) {
    const live = state.filter((s) => s.left > 0);
    if (!live.length) break;
    const s = live.reduce((a, b) => (b.due < a.due ? b : a));
    clock.t = Math.max(clock.t, s.due);
    const n = Math.min(s.pacer.batchSize, s.left);
    clock.t += fetchMs;
    s.left -= n;
    log.push({ account: s.i, at: clock.t, n });
    s.due = clock.t;
    await s.pacer.after(n);
    if (s.left === 0) {
      running--;
      ends[s.i] = s.due; // the run ends when its last batch is paid for
    }
  }
  return { log, ends };
}

/** The most messages fetched in any window of `ms` (windows starting at each batch). */
function mostInWindow(log, ms) {
  let most = 0;
  for (const a of log) {
    const n = log.filter((b) => b.at >= a.at && b.at < a.at + ms).reduce((x, b) => x + b.n, 0);
    most = Math.max(most, n);
  }
  return most;
}

test('batches are about a second of the host rate over its accounts, at least 10', () => {
  const p = (rate, perHost) =>
    createPacer({ rate, perHost, batchSize: 500, running: async () => 1 }).batchSize;
  expect(p(300, 2)).toBe(150);
  expect(p(12, 4)).toBe(10);
  expect(p(100000, 4)).toBe(500);
  expect(p(0, 4)).toBe(500); // no cap: the import's own batch
});

test('no cap: never waits', async () => {
  const clock = fakeClock();
  const p = createPacer({
    rate: 0,
    perHost: 4,
    batchSize: 100,
    running: async () => 1,
    now: clock.now,
    sleep: clock.sleep,
  });
  for (let i = 0; i < 10; i++) await p.after(100);
  expect(clock.t).toBe(0);
});

test('one account alone: N messages at rate R take at least N/R, whatever a fetch costs', async () => {
  for (const fetchMs of [0, 5, 40]) {
    const { log, ends } = await runHost({ rate: 50, perHost: 2, accounts: [1000], fetchMs });
    expect(ends[0]).toBeGreaterThanOrEqual((1000 / 50) * 1000);
    // In every 1 s window: at most 50 messages plus one batch (25).
    expect(mostInWindow(log, 1000)).toBeLessThanOrEqual(50 + 25);
    // And over 10 s: 500 plus one batch.
    expect(mostInWindow(log, 10000)).toBeLessThanOrEqual(500 + 25);
  }
});

test('accounts sharing a host never exceed its rate together, also when one of them ends', async () => {
  // Two accounts of one host at 100 msg/s: a small one that ends after ~10 s and a big one.
  // Fetching is instant (a fast machine): only the pacer holds them back.
  const { log } = await runHost({ rate: 100, perHost: 2, accounts: [500, 3000], fetchMs: 0 });
  const batch = 50; // ceil(100 / 2)
  for (const w of [1000, 2000, 5000, 10000]) {
    expect(mostInWindow(log, w)).toBeLessThanOrEqual((100 * w) / 1000 + 2 * batch);
  }
  // And the host is used: after the small account ended, the big one runs at the whole rate
  // (its last 1000 messages in about 10 s, not 20).
  const big = log.filter((b) => b.account === 1);
  const last = big[big.length - 1].at;
  const from = big.find((b, k) => big.slice(k).reduce((x, y) => x + y.n, 0) <= 1000).at;
  expect(last - from).toBeLessThanOrEqual(11000);
});

test('a share that grows (the other account ended) gives no burst to catch up', async () => {
  // One account, told 2 are running for its first 20 s and 1 afterwards.
  const clock = fakeClock();
  let batches = 0;
  const got = [];
  const p = createPacer({
    rate: 100,
    perHost: 2,
    batchSize: 1000,
    running: async () => (clock.t < 20000 ? 2 : 1),
    now: clock.now,
    sleep: clock.sleep,
  });
  while (clock.t < 40000) {
    got.push({ at: clock.t, n: p.batchSize });
    await p.after(p.batchSize);
    batches++;
  }
  expect(batches).toBeGreaterThan(10);
  // Before the change 50/s, after it 100/s: never more than 100 in a second (+ one batch).
  expect(mostInWindow(got, 1000)).toBeLessThanOrEqual(100 + 50);
  expect(mostInWindow(got, 5000)).toBeLessThanOrEqual(500 + 50);
});
