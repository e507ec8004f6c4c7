'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { agreement, summarize, sample, signature } = require('../lib/harness');
const { runBench } = require('../lib/runner');
const { messageKey } = require('../lib/keys');
const { parse, compilePredicate } = require('@mailgate/query');
const { BackendUnavailable } = require('../lib/backends');
const { syntheticCorpus } = require('./fixtures');

/*
 * Unit tests of the harness logic. The fake backend here answers queries from the built
 * Maildir in memory; it exists to test the agreement check (one of them deliberately returns
 * a different set), not to stand in for a real backend.
 */
function fakeBackend(name, { wrongOn } = {}) {
  let msgs = [];
  let gone = new Set();
  const live = () => msgs.filter((m) => !gone.has(m.key));
  return {
    name,
    wordSearch: true,
    async load(box) {
      const dir = path.join(box.maildir, 'cur');
      msgs = fs
        .readdirSync(dir)
        .sort()
        .map((f, i) => {
          const raw = fs.readFileSync(path.join(dir, f));
          const text = raw.toString('latin1');
          const date = new Date(/^Date: (.*)$/m.exec(text)[1]);
          const from = /^From: (.*)$/m.exec(text)[1];
          return {
            uid: i + 1,
            key: messageKey(raw),
            view: { fromText: from, headerText: text, bodyText: text, date, flags: [] },
          };
        });
      return { seconds: 0.001, messages: msgs.length };
    },
    async firstOpen() {
      return { count: live().length };
    },
    async headers() {
      return { ids: live().map((m) => m.uid) };
    },
    async search(q) {
      const test = compilePredicate(parse(q));
      let ids = live()
        .filter((m) => test(m.view))
        .map((m) => m.uid);
      if (wrongOn && q.startsWith(wrongOn)) ids = ids.slice(1);
      return { ids };
    },
    async expunge(keys) {
      for (const k of keys) gone.add(k);
      return { ids: msgs.filter((m) => keys.includes(m.key)).map((m) => m.uid) };
    },
    async restore() {
      gone = new Set();
    },
    async fetchOne(key) {
      return { ids: msgs.filter((m) => m.key === key).map((m) => m.uid) };
    },
    keysOf(ids) {
      return ids.map((u) => msgs[u - 1].key);
    },
    async restart() {
      return {};
    },
    async close() {},
  };
}

/**
 * A fake backend whose header scan takes `wallMs` of the wall clock but reports `ms` of its
 * own clock, as the imap door's raw client does.
 */
function selfTimedHeaders(b, wallMs, ms) {
  const headers = b.headers;
  b.headers = async () => {
    const until = Date.now() + wallMs;
    while (Date.now() < until);
    return { ...(await headers()), ms };
  };
  return b;
}

/**
 * runBench on a synthetic corpus of `count` messages as the small size, in a scratch work
 * directory; both are removed afterwards.
 */
async function runSmall(count, opts) {
  const corpus = syntheticCorpus(count);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'mgb-h-'));
  try {
    return await runBench({
      corpus: corpus.dir,
      work,
      sizes: ['small'],
      sizeCounts: { small: count },
      ...opts,
    });
  } finally {
    fs.rmSync(corpus.dir, { recursive: true, force: true });
    fs.rmSync(work, { recursive: true, force: true });
  }
}

describe('harness', () => {
  test('summarize: median, min, max', () => {
    expect(summarize([5, 1, 3])).toEqual({ median: 3, min: 1, max: 5 });
    expect(summarize([4, 1, 3, 2])).toEqual({ median: 2.5, min: 1, max: 4 });
  });

  test('seeded samples are deterministic and sized', () => {
    const items = Array.from({ length: 1000 }, (_, i) => i);
    expect(sample(items, 0.2, 1)).toHaveLength(200);
    expect(sample(items, 0.2, 1)).toEqual(sample(items, 0.2, 1));
    expect(sample(items, 0.2, 1)).not.toEqual(sample(items, 0.2, 2));
    expect(sample(items.slice(0, 10), 0.01, 1)).toHaveLength(1);
  });

  test('agreement: order of a set does not matter; the odd one out is flagged', () => {
    expect(signature(['b', 'a'])).toBe(signature(['a', 'b']));
    const v = agreement([
      { backend: 'pg', answer: ['a', 'b'] },
      { backend: 'x', answer: ['b', 'a'] },
      { backend: 'y', answer: ['a'] },
    ]);
    expect(Object.fromEntries(v)).toEqual({ pg: true, x: true, y: false });
    // A tie goes to the earliest backend; an expected answer overrides the vote.
    const tie = agreement([
      { backend: 'pg', answer: 3 },
      { backend: 'y', answer: 4 },
    ]);
    expect(Object.fromEntries(tie)).toEqual({ pg: true, y: false });
    const exp = agreement([{ backend: 'pg', answer: ['a'] }], ['a', 'b']);
    expect(exp.get('pg')).toBe(false);
  });

  test('runBench reports a backend with a different answer as agrees:false', async () => {
    const run = await runSmall(200, {
      backends: ['a', 'b', 'liar', 'es'],
      runs: 2,
      cold: false,
      createBackend: (name) => {
        // An unavailable backend (es without ELASTICSEARCH_URL) is skipped with a note.
        if (name === 'es') throw new BackendUnavailable('es', 'ELASTICSEARCH_URL is not set');
        return fakeBackend(name, name === 'liar' ? { wrongOn: 'text:zebra' } : {});
      },
    });
    const rows = run.results;
    for (const r of rows) {
      expect(Object.keys(r)).toEqual([
        'backend',
        'door',
        'size',
        'messages',
        'request',
        'phase',
        'ms',
        'samples',
        'matches',
        'agrees',
      ]);
    }
    const bad = rows.filter((r) => !r.agrees).map((r) => `${r.backend}:${r.request}`);
    expect(bad).toEqual(['liar:text_rare']);
    const rare = rows.filter((r) => r.request === 'text_rare');
    expect(rare.map((r) => r.matches)).toEqual([2, 2, 1]);
    const exp = rows.find((r) => r.backend === 'a' && r.request === 'expunge_20pct');
    expect(exp).toMatchObject({ matches: 40, agrees: true, phase: 'warm' });
    expect(exp.ms.min).toBeLessThanOrEqual(exp.ms.median);
    // Every sample is kept, and the summary is computed from them.
    expect(exp.samples).toHaveLength(2);
    expect(exp.ms.min).toBe(Math.min(...exp.samples));
    expect(exp.ms.max).toBe(Math.max(...exp.samples));
    // The unavailable backend is skipped with a note, not fatal.
    expect(run.notes.join('\n')).toMatch(/backend es is not available yet/);
    expect(rows.some((r) => r.backend === 'es')).toBe(false);
    // Where the wall time went, per backend that ran (planning a full run).
    expect(run.wall.map((w) => w.backend)).toEqual(['a', 'b', 'liar']);
    for (const w of run.wall) {
      expect(w).toMatchObject({ size: 'small', cold: 0 });
      expect(w.total).toBeCloseTo(w.load + w.warm + w.expunge + w.cold, 1);
    }
  });

  test('--cold-runs: each cold sample follows its own restart; the median is reported', async () => {
    let restarts = 0;
    let cold = false;
    const run = await runSmall(30, {
      backends: ['a'],
      runs: 1,
      cold: true,
      coldRuns: 3,
      dropCaches: false,
      createBackend: (name) => {
        const b = fakeBackend(name);
        const headers = b.headers;
        // The first request after a restart is the cold one: 30, 10, 20 ms.
        const delays = [30, 10, 20];
        b.restart = async () => {
          restarts++;
          cold = true;
          return {};
        };
        b.headers = async () => {
          if (!cold) return headers();
          cold = false;
          // Self-timed (as the imap door is) after waiting at least as long: exact samples.
          const ms = delays[(restarts - 1) % 3];
          const until = Date.now() + ms + 1;
          while (Date.now() < until);
          return { ...(await headers()), ms };
        };
        return b;
      },
    });
    const h = run.results.find((r) => r.request === 'headers' && r.phase === 'cold');
    expect(h.samples).toEqual([30, 10, 20]);
    expect(h.ms).toEqual({ median: 20, min: 10, max: 30 });
    expect(h.matches).toBe(30);
    const coldRows = run.results.filter((r) => r.phase === 'cold');
    expect(restarts).toBe(coldRows.length * 3);
    expect(run.notes.join('\n')).not.toMatch(/cold samples/);
  });

  test('--requests: only the named requests are timed, warm and cold; the load always', async () => {
    let restarts = 0;
    const run = await runSmall(30, {
      backends: ['a'],
      runs: 1,
      cold: true,
      coldRuns: 2,
      dropCaches: false,
      requests: ['headers'],
      createBackend: (name) => {
        const b = fakeBackend(name);
        b.restart = async () => {
          restarts++;
          return {};
        };
        return b;
      },
    });
    const rows = run.results.map((r) => `${r.request}/${r.phase}`).sort();
    expect(rows).toEqual(['headers/cold', 'headers/warm', 'import/warm']);
    expect(restarts).toBe(2);
  });

  test('--requests without first_open still opens the mailbox, untimed, before the reads', async () => {
    // The IMAP door's reads need a SELECTed mailbox, as a client has: they answered
    // "BAD No mailbox selected" when first_open was not among the requests.
    const run = await runSmall(30, {
      backends: ['a'],
      runs: 1,
      requests: ['headers'],
      createBackend: (name) => {
        const b = fakeBackend(name);
        const { firstOpen, headers } = b;
        let open = false;
        b.firstOpen = async (...args) => {
          open = true;
          return firstOpen.apply(b, args);
        };
        b.headers = async (...args) => {
          if (!open) throw new Error('BAD No mailbox selected');
          return headers.apply(b, args);
        };
        return b;
      },
    });
    const rows = run.results.map((r) => `${r.request}/${r.phase}`).sort();
    expect(rows).toEqual(['headers/warm', 'import/warm']);
  });

  test('the first open is timed cold too, after a reconnect that does not open the mailbox', async () => {
    const opens = [];
    let restarted = false;
    const run = await runSmall(30, {
      backends: ['a'],
      runs: 1,
      cold: true,
      dropCaches: false,
      createBackend: (name) => {
        const b = fakeBackend(name);
        const firstOpen = b.firstOpen;
        b.restart = async () => {
          restarted = true;
          return { reconnect: async (opts) => opens.push(opts) };
        };
        // What an IMAP server's SELECT does after a restart: the first open pays for it.
        // Self-timed after waiting at least as long (the runner keeps the smaller figure).
        b.firstOpen = async () => {
          const ms = restarted ? 25 : 1;
          const until = Date.now() + ms + 1;
          while (Date.now() < until);
          return { ...(await firstOpen()), ms };
        };
        return b;
      },
    });
    const cold = run.results.filter((r) => r.phase === 'cold');
    expect(cold[0]).toMatchObject({ request: 'first_open', samples: [25], matches: 30 });
    expect(cold[0].agrees).toBe(true);
    // One reconnect per cold sample: bare before the first open, opening before the others.
    expect(opens).toHaveLength(cold.length);
    expect(opens[0]).toEqual({ open: false });
    expect(opens.slice(1).every((o) => o.open === true)).toBe(true);
    const warm = run.results.find((r) => r.request === 'first_open' && r.phase === 'warm');
    expect(warm.samples).toEqual([1]);
  });

  test('--budget stops cold repeats too, and the notes say which requests got fewer', async () => {
    const run = await runSmall(20, {
      backends: ['slow'],
      runs: 1,
      budget: 0.05,
      cold: true,
      coldRuns: 3,
      dropCaches: false,
      // 60 ms per header scan: past the 50 ms budget after the first sample.
      createBackend: (name) => selfTimedHeaders(fakeBackend(name), 61, 60),
    });
    const h = run.results.find((r) => r.request === 'headers' && r.phase === 'cold');
    expect(h.samples).toEqual([60]);
    // Fast requests still get their three cold samples.
    const fast = run.results.find((r) => r.request === 'text_rare' && r.phase === 'cold');
    expect(fast.samples).toHaveLength(3);
    expect(run.notes.join('\n')).toMatch(/fewer than 3 cold samples.*slow small headers: 1/);
  });

  test('--budget: a slow request stops repeating once its samples used the budget', async () => {
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    const run = await runSmall(50, {
      backends: ['slow'],
      runs: 5,
      budget: 0.1,
      cold: false,
      createBackend: (name) => {
        const b = fakeBackend(name);
        const headers = b.headers;
        // 60 ms a header scan: the second sample ends past the 100 ms budget.
        b.headers = async () => {
          await sleep(60);
          return headers();
        };
        return b;
      },
    });
    const h = run.results.find((r) => r.request === 'headers');
    // Sampling stops at the first sample that takes the sum past the budget: two on an idle
    // machine (60 + 60 ms), one when a busy machine stretches the first past 100 ms. The rule
    // is asserted, not the machine's speed.
    const sum = (xs) => xs.reduce((a, b) => a + b, 0);
    expect(h.samples.length).toBeGreaterThanOrEqual(1);
    expect(h.samples.length).toBeLessThan(5);
    expect(sum(h.samples.slice(0, -1))).toBeLessThan(100);
    expect(sum(h.samples)).toBeGreaterThanOrEqual(100);
    expect(h.ms.min).toBeGreaterThanOrEqual(55);
    // Fast requests still get all five samples, and the short ones are listed in the notes.
    expect(run.results.find((r) => r.request === 'text_rare').samples).toHaveLength(5);
    expect(run.notes.join('\n')).toMatch(
      new RegExp(`fewer than 5 warm samples.*slow small headers: ${h.samples.length}`),
    );
  });
  test('a self-timed adapter (the imap door) is recorded by its own figure: a slow parse after its clock is not counted', async () => {
    const run = await runSmall(30, {
      backends: ['raw', 'dovecot-x-api'],
      runs: 3,
      cold: false,
      createBackend: (name) => {
        const b = fakeBackend(name);
        if (name !== 'raw') return b;
        b.door = 'imap';
        // The client's own clock says 2 ms; turning the answer into uids takes 80 ms.
        return selfTimedHeaders(b, 80, 2);
      },
    });
    const raw = run.results.find((r) => r.backend === 'raw' && r.request === 'headers');
    expect(raw.door).toBe('imap');
    expect(raw.ms.max).toBe(2);
    expect(raw.agrees).toBe(true);
    // Without a figure of its own, an adapter is timed by the wall clock; -api names the api door.
    const api = run.results.find((r) => r.backend === 'dovecot-x-api' && r.request === 'headers');
    expect(api.door).toBe('api');
    expect(run.results.find((r) => r.backend === 'raw' && r.request === 'import').door).toBe(
      'imap',
    );
  });
});
