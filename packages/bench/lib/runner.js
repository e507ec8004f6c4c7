'use strict';

const fs = require('node:fs');
const { execSync } = require('node:child_process');
const { SIZES, buildMailbox } = require('./mailboxes');
const { selectQueries } = require('./select');
const { messageKey } = require('./keys');
const { createBackend } = require('./backends');
const { summarize, agreement, sample } = require('./harness');

/** Request names in report order (the brief's list, then the study's own words). */
const REQUESTS = [
  'import',
  'first_open',
  'headers',
  'headers_list',
  'text_rare',
  'text_common',
  'word_rare',
  'word_common',
  'from',
  'date',
  'text_absent',
  'fetch_one',
  'expunge_1pct',
  'expunge_20pct',
  'text_happy',
  'text_free',
  'word_happy',
  'word_free',
];

const SEED = 2003;

/**
 * Drops the OS page cache, when the machine lets us.
 * @returns {boolean} whether it was dropped
 */
function dropCaches() {
  try {
    execSync('sync; echo 3 > /proc/sys/vm/drop_caches', { stdio: 'ignore', shell: '/bin/sh' });
    return true;
  } catch {
    return false;
  }
}

const now = () => process.hrtime.bigint();
const msSince = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
// An adapter whose client times itself (the imap door's raw client: write to tagged OK) returns
// `ms`, so that reading uids out of the answer afterwards is never part of the figure.
const timedMs = (res, t0) => {
  const wall = msSince(t0);
  return res && typeof res.ms === 'number' ? Math.min(res.ms, wall) : wall;
};

/**
 * Runs the benchmark.
 * @param {object} o
 * @param {string} o.corpus corpus directory
 * @param {string} o.work scratch dir (built mailboxes, embedded PostgreSQL)
 * @param {string[]} o.sizes of small, medium, large
 * @param {string[]} o.backends
 * @param {number} o.runs warm repeats
 * @param {number} [o.budget] seconds of timed samples per request after which no further
 *   repeat starts (at least one sample is always taken); default: no limit
 * @param {boolean} o.cold also time cold requests
 * @param {number} [o.coldRuns] cold samples per request (each after its own restart and cache
 *   drop; the median is reported), default 1
 * @param {string[]} [o.requests] time only these requests (REQUESTS names); default all
 * @param {boolean} [o.dropCaches] false: never drop the page cache (tests)
 * @param {(s: string) => void} [o.log] progress on stderr
 * @param {object} [o.config] mailgate config (loadConfig())
 * @param {(name: string, ctx: object) => object} [o.createBackend] for tests of the harness
 * @param {Record<string, number>} [o.sizeCounts] override of SIZES (tests)
 * @returns {Promise<{results: object[], queries: object, notes: string[], wall: object[], dropCaches: boolean|null, empty: string[]}>}
 *   empty: each size and backend that produced no result row, with why ("small es: backend es
 *   is not available yet: …"), so that a partial run says what it lacks and an empty run fails
 */
async function runBench(o) {
  const log = o.log || (() => {});
  const make = o.createBackend || createBackend;
  const counts = o.sizeCounts || SIZES;
  const results = [];
  const queries = {};
  const notes = [];
  let dropped = null;
  const budgetMs = (o.budget ?? Infinity) * 1000;
  // At least one sample; more until --runs, or until the request's timed samples have used
  // --budget (a 10 s scan of a large mbox is not repeated five times).
  const wantMore = (samples, spent) =>
    samples.length < o.runs && (samples.length === 0 || spent < budgetMs);
  // Requests that got fewer than --runs samples because of --budget, and how many they got.
  const budgeted = [];
  const coldBudgeted = [];
  // Where the run's wall time went, per size and backend (s): load (import and first open),
  // warm reads, expunges (with their untimed restores), cold (restarts, cache drops, one
  // sample each) — for planning a full run, not a result.
  const wall = [];
  const empty = [];
  for (const size of o.sizes) {
    if (!counts[size]) throw new Error(`unknown size ${size} (small, medium, large)`);
    const box = buildMailbox({
      corpus: o.corpus,
      work: o.work,
      name: size,
      count: counts[size],
      log,
    });
    const raws = box.files.map((f) => fs.readFileSync(f));
    const sel = selectQueries(raws);
    queries[size] = [...sel.queries, ...sel.extra];
    for (const q of queries[size]) {
      log(
        `  ${size} ${q.request.padEnd(12)} ${q.query.padEnd(32)} ${q.count} messages (${(100 * q.fraction).toFixed(2)}%)`,
      );
    }
    // Reference order of messages (path order) for the seeded choices: the same messages are
    // fetched and expunged on every backend.
    const refKeys = raws.map(messageKey);
    const fetchKey = refKeys[Math.floor(refKeys.length / 2)];
    const expungeKeys = {
      expunge_1pct: sample(refKeys, 0.01, SEED),
      expunge_20pct: sample(refKeys, 0.2, SEED + 1),
    };
    // answers[request] = [{backend, answer}] for the agreement check; rows wait for it.
    const answers = {};
    const pending = [];
    const doors = new Map();
    const record = (backend, request, phase, samples, answer, matches, extra) => {
      const row = {
        backend,
        door: doors.get(backend) || 'store',
        size,
        messages: box.count,
        request,
        phase,
        ms: summarize(samples),
        samples: samples.map((x) => Math.round(x * 1000) / 1000),
        matches,
        agrees: true,
        ...extra,
      };
      results.push(row);
      pending.push(row);
      if (phase === 'warm') (answers[request] = answers[request] || []).push({ backend, answer });
      return row;
    };
    for (const name of o.backends) {
      let b;
      try {
        b = make(name, { work: o.work, size, log, config: o.config });
        // The door every result names (brief: store, imap or api); adapters say theirs.
        doors.set(name, b.door || (name.endsWith('-api') ? 'api' : 'store'));
      } catch (err) {
        // A pending backend (es, mbox, maildir) is skipped and said so, not fatal.
        if (err.code !== 'BACKEND_UNAVAILABLE') throw err;
        log(`${size}: ${name}: skipped: ${err.message}`);
        // Named with its size: results.md says which parts of the run produced nothing.
        empty.push(`${size} ${name}: ${err.message}`);
        notes.push(`no results for ${size} ${name}: ${err.message}`);
        continue;
      }
      log(`${size}: ${name}: loading ${box.count} messages`);
      const used = { size, backend: name, load: 0, warm: 0, expunge: 0, cold: 0, total: 0 };
      wall.push(used);
      let mark = now();
      const part = (key) => {
        const t = now();
        used[key] = Math.round(Number(t - mark) / 1e7) / 100;
        mark = t;
      };
      // An adapter with `requests` (es) answers only those; the others are reported, once.
      const offered = (request) => !b.requests || b.requests.has(request);
      // --requests: a run restricted to some requests (import, the load, is always made).
      const applies = (request) =>
        offered(request) && (!o.requests || o.requests.includes(request));
      const skipped = REQUESTS.filter((r) => !offered(r));
      if (skipped.length) {
        const note = `${name}: not applicable: ${skipped.join(', ')}`;
        log(`  ${note}`);
        if (!notes.includes(note)) notes.push(note);
      }
      try {
        const loaded = await b.load(box);
        // `extra`: what the load cost beside its time (CPU, an index built: its size).
        record(
          name,
          'import',
          'warm',
          [loaded.seconds * 1000],
          loaded.messages,
          loaded.messages,
          loaded.extra,
        );
        log(`  import ${loaded.messages} in ${loaded.seconds.toFixed(2)} s`);
        let t0 = now();
        if (applies('first_open')) {
          const opened = await b.firstOpen();
          record(name, 'first_open', 'warm', [timedMs(opened, t0)], opened.count, opened.count);
        } else {
          // Untimed, but done: the IMAP door's reads need the mailbox SELECTed, as a client has.
          await b.firstOpen();
        }
        if (b.ready) await b.ready();
        part('load');

        // Read-only requests: one untimed run gives the answer, then --runs timed repeats.
        const reads = [{ request: 'headers', run: () => b.headers('headers') }];
        // The list view (a mail client's message list): adapters that have one say so.
        if (b.listView)
          reads.push({ request: 'headers_list', run: () => b.headers('headers_list') });
        for (const q of queries[size]) {
          if (q.request.startsWith('word_') && !b.wordSearch) continue;
          reads.push({ request: q.request, run: () => b.search(q.query) });
        }
        reads.push({ request: 'fetch_one', run: () => b.fetchOne(fetchKey) });
        for (let i = reads.length - 1; i >= 0; i--)
          if (!applies(reads[i].request)) reads.splice(i, 1);
        for (const r of reads) {
          const first = await r.run();
          const keys = b.keysOf(first.ids);
          const samples = [];
          let spent = 0;
          while (wantMore(samples, spent)) {
            t0 = now();
            const res = await r.run();
            const ms = timedMs(res, t0);
            samples.push(ms);
            spent += ms;
            if (res.ids.length !== first.ids.length) {
              notes.push(`${name} ${size} ${r.request}: answer changed between runs`);
            }
          }
          if (samples.length < o.runs) {
            budgeted.push(`${name} ${size} ${r.request}: ${samples.length}`);
          }
          record(name, r.request, 'warm', samples, keys, keys.length);
          log(
            `  ${r.request.padEnd(13)} ${summarize(samples).median.toFixed(1)} ms, ${keys.length} matches`,
          );
        }

        part('warm');
        // Expunges: the pristine mailbox is restored (untimed) before every sample.
        let dirty = false;
        for (const request of ['expunge_1pct', 'expunge_20pct']) {
          if (!applies(request)) continue;
          const samples = [];
          let keys = [];
          let spent = 0;
          while (wantMore(samples, spent)) {
            if (dirty) await b.restore();
            t0 = now();
            const res = await b.expunge(expungeKeys[request]);
            const ms = timedMs(res, t0);
            samples.push(ms);
            spent += ms;
            dirty = true;
            keys = b.keysOf(res.ids);
          }
          if (samples.length < o.runs)
            budgeted.push(`${name} ${size} ${request}: ${samples.length}`);
          record(name, request, 'warm', samples, keys, keys.length);
          log(
            `  ${request.padEnd(13)} ${summarize(samples).median.toFixed(1)} ms, ${keys.length} expunged`,
          );
        }
        if (dirty) await b.restore();
        part('expunge');

        if (o.cold) {
          // Each cold sample is a restart and a cache drop of its own; one sample is the
          // default, the median of --cold-runs takes out a disk or host hiccup.
          const coldRuns = Math.max(1, o.coldRuns || 1);
          // The first open is timed cold too: an IMAP server's untimed SELECT before the other
          // cold requests does work of its own (it may read the whole mailbox), and that work
          // is shown here instead of hidden. `bare`: reconnect without opening the mailbox.
          const coldReads = applies('first_open')
            ? [{ request: 'first_open', run: () => b.firstOpen(), bare: true }, ...reads]
            : reads;
          for (const r of coldReads) {
            const samples = [];
            let matches = null;
            let spent = 0;
            const hows = new Set();
            // --budget applies as to warm repeats: a 15 s cold scan is not repeated.
            while (samples.length < coldRuns && (samples.length === 0 || spent < budgetMs)) {
              const rs = await b.restart();
              if (rs.note && !notes.includes(`${name}: ${rs.note}`))
                notes.push(`${name}: ${rs.note}`);
              // Tests pass dropCaches: false: a cache drop slows everyone else on the machine.
              dropped = o.dropCaches === false ? false : dropCaches();
              hows.add(
                (rs.how || 'restarted (adapter did not say how)') +
                  (dropped ? '' : ' (page cache NOT dropped)'),
              );
              if (rs.reconnect) await rs.reconnect({ open: !r.bare });
              t0 = now();
              const res = await r.run();
              samples.push(timedMs(res, t0));
              spent += samples[samples.length - 1];
              // firstOpen answers a message count, the other requests message ids.
              const n = res.ids ? res.ids.length : res.count;
              if (matches !== null && n !== matches) {
                notes.push(`${name} ${size} ${r.request}: cold answer changed between runs`);
              }
              matches = n;
            }
            if (samples.length < coldRuns) {
              coldBudgeted.push(`${name} ${size} ${r.request}: ${samples.length}`);
            }
            // How each cold sample was made (issue 35 item 1): a new process or not, said.
            record(name, r.request, 'cold', samples, null, matches, {
              cold: { how: [...hows].join(' | '), pageCacheDropped: dropped },
            });
            const m = summarize(samples).median;
            log(
              `  cold ${r.request.padEnd(13)} ${m.toFixed(1)} ms` +
                (coldRuns > 1 ? ` (median of ${coldRuns})` : ''),
            );
          }
          part('cold');
        }
      } finally {
        await b.close();
        used.total = Math.round((used.load + used.warm + used.expunge + used.cold) * 100) / 100;
        log(
          `  ${name}: ${used.total} s (load ${used.load}, warm ${used.warm}, ` +
            `expunge ${used.expunge}, cold ${used.cold})`,
        );
      }
    }
    // The agreement check, per request over the backends that answered it.
    for (const [request, list] of Object.entries(answers)) {
      const expected = expungeKeys[request];
      const verdict = agreement(list, expected);
      for (const row of pending) {
        if (row.request === request && verdict.has(row.backend))
          row.agrees = verdict.get(row.backend);
      }
    }
    // A cold answer is trusted as far as its warm twin's answer was.
    for (const row of pending) {
      if (row.phase !== 'cold') continue;
      const warm = pending.find(
        (w) => w.phase === 'warm' && w.backend === row.backend && w.request === row.request,
      );
      row.agrees = !!warm && warm.agrees && warm.matches === row.matches;
    }
  }
  if (budgeted.length) {
    notes.push(
      `fewer than ${o.runs} warm samples (--budget ${o.budget} s per request): ${budgeted.join('; ')}`,
    );
  }
  if (coldBudgeted.length) {
    notes.push(
      `fewer than ${o.coldRuns} cold samples (--budget ${o.budget} s per request): ` +
        coldBudgeted.join('; '),
    );
  }
  if (o.cold && dropped === false)
    notes.push('page cache NOT dropped: /proc/sys/vm/drop_caches not writable');
  return { results, queries, notes, wall, dropCaches: o.cold ? dropped : null, empty };
}

module.exports = { runBench, REQUESTS, dropCaches };
