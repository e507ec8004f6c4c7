'use strict';

/* global window, document, requestAnimationFrame -- the functions given to page.evaluate run in the browser */

/*
 * Webmail page benchmark (npm run bench:web): the 2003 study's large mailbox (the first
 * 21,282 Enron messages in path order, built by @mailgate/bench's buildMailbox exactly as
 * `mailgate bench` builds it) imported once into a scratch MAILGATE_HOME, `mailgate serve`'s
 * server started in this process, and the page driven in headless Chromium (Debian's
 * /usr/bin/chromium through playwright-core). Per run, on a fresh page, timed by a probe the
 * benchmark injects (pageProbe: not the app's own marks), rows recognised by the uids the API
 * gives for the same question:
 *   - navigation start to the newest message's row painted;
 *   - a search typed into the box: the Enter keydown's event time to the first result's row
 *     painted;
 *   - from the first rows on, the list scrolled to the end with the mouse wheel while the rest
 *     of the mailbox still arrives: the longest task on Chromium's performance timeline
 *     (PerformanceObserver 'longtask', >= 50 ms) until the oldest message's row is painted.
 * A benchmark, not a test: figures are printed and written to bench/results/web-<time>.json
 * (or --out FILE). Take figures on a quiet machine: import first (--prepare-only), then measure.
 *
 *   npm run bench:web [-- --runs N] [--query 'from:enron.com subject:meeting'] [--home DIR]
 *                        [--out FILE] [--prepare-only] [--cpu-throttle N]
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { loadConfig } = require('@mailgate/core');
const { startServer } = require('@mailgate/api');
const { ROOT, run, option, corpusDir } = require('../command-kit');
const { machineFacts } = require('../machine');
const { buildMailbox, SIZES } = require('../mailboxes');

const CHROMIUM = process.env.MAILGATE_CHROMIUM || '/usr/bin/chromium';

/**
 * The command's options (see the file comment).
 * @param {string[]} args
 */
function options(args) {
  return {
    RUNS: Number(option(args, '--runs', 5)),
    QUERY: option(args, '--query', 'from:enron.com subject:meeting'),
    HOME: path.resolve(option(args, '--home', path.join(os.tmpdir(), 'mailgate-bench-web'))),
    // Chromium's CPU throttling (DevTools' "4x slowdown"): the same page on a slower machine.
    THROTTLE: Number(option(args, '--cpu-throttle', 1)),
    OUT: option(args, '--out', null),
    prepareOnly: args.includes('--prepare-only'),
  };
}
const USER = 'bench-web';
const PASSWORD = 'bench-web-password';

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : null;
}

/** The large mailbox in the scratch home, imported once (a re-run reuses it). */
function prepare(env, { HOME }) {
  const corpus = corpusDir();
  if (!corpus) throw new Error('../shared/corpus not found: the benchmark needs the Enron set');
  const box = buildMailbox({
    corpus,
    work: path.join(HOME, 'work'),
    name: 'large',
    count: SIZES.large,
    log: (s) => process.stderr.write(`${s}\n`),
  });
  const ls = JSON.parse(run(['ls', '--user', USER, '--json'], env).stdout || '{}');
  const have = ((ls.mailboxes || []).find((b) => b.name === 'INBOX') || {}).total || 0;
  if (have !== SIZES.large) {
    process.stderr.write(`importing ${box.mbox} (${SIZES.large} messages)\n`);
    run(['import', 'mbox', box.mbox, '--user', USER, '--mailbox', 'INBOX', '--quiet'], env);
  }
  return box;
}

/*
 * In the page before any of its own code: the long-task observer, and a probe that watches
 * every frame for the rows the benchmark waits for. Both are independent of the app's code
 * (no app marks): a row counts as shown when it is in the DOM, not hidden, inside the shown
 * app, at the start of a frame; the time taken is after that frame's paint (a task queued from
 * requestAnimationFrame runs after the frame is produced).
 */
function pageProbe(token) {
  sessionStorage.setItem('mailgate.token', token);
  window.__bench = { longtasks: [], waits: {}, seen: {} };
  new PerformanceObserver((l) => {
    for (const e of l.getEntries()) {
      window.__bench.longtasks.push({ start: e.startTime, ms: e.duration });
    }
  }).observe({ type: 'longtask', buffered: true });
  // Enter in the search box: the event's own time stamp (when the input happened).
  window.addEventListener(
    'keydown',
    (e) => {
      if (e.key === 'Enter') window.__bench.enterAt = e.timeStamp;
    },
    true,
  );
  const visible = (sel) => {
    const el = document.querySelector(sel);
    return Boolean(el && !el.hidden && el.closest('[hidden]') === null && el.offsetParent);
  };
  const frame = () => {
    for (const [name, sel] of Object.entries(window.__bench.waits)) {
      if (window.__bench.seen[name] === undefined && visible(sel)) {
        window.__bench.seen[name] = null;
        setTimeout(() => (window.__bench.seen[name] = performance.now()), 0);
      }
    }
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
}

/** First uids of the mailbox and of the search in the page's order, asked of the API. */
async function expectations(url, token, { QUERY }) {
  const get = async (p) => {
    const r = await fetch(`${url}/api/v1${p}`, { headers: { authorization: `Bearer ${token}` } });
    if (!r.ok) throw new Error(`${p}: ${r.status}`);
    return r.json();
  };
  const newest = await get('/mailboxes/INBOX/messages?order=-uid&limit=1');
  const oldest = await get('/mailboxes/INBOX/messages?order=uid&limit=1');
  const search = await get(
    `/search?q=${encodeURIComponent(QUERY)}&mailbox=INBOX&order=-uid&limit=1`,
  );
  return {
    firstUid: newest.messages[0].uid,
    lastUid: oldest.messages[0].uid,
    searchUid: search.messages[0].uid,
    searchTotal: search.total,
  };
}

const ROW = (uid) => `#app:not([hidden]) #list .ml-row[data-uid="${uid}"]`;

async function measure(context, url, token, expect, { THROTTLE, QUERY }) {
  const page = await context.newPage();
  page.setDefaultTimeout(120000);
  // Signed in already (the token in sessionStorage), so navigation goes straight to the list.
  await page.addInitScript(pageProbe, token);
  await page.addInitScript((sel) => (window.__bench.waits.first = sel), ROW(expect.firstUid));
  const seen = (name) =>
    page
      .waitForFunction((n) => window.__bench.seen[n] > 0, name)
      .then(() => page.evaluate((n) => window.__bench.seen[n], name));
  const tasks = (from, to) =>
    page.evaluate(
      ([a, b]) => window.__bench.longtasks.filter((e) => e.start + e.ms >= a && e.start <= b),
      [from, to],
    );

  if (THROTTLE > 1) {
    const cdp = await context.newCDPSession(page);
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: THROTTLE });
  }
  // Navigation → the newest message's row shown (times are since navigation start).
  await page.goto(`${url}/#mailbox=INBOX`);
  const firstRows = await seen('first');
  // Where the time went: the document, the app's modules running (its first mark).
  const startup = await page.evaluate(() => {
    const n = performance.getEntriesByType('navigation')[0];
    const open = window.mailgate.marks.find((m) => m.name === 'mg:open-mailbox');
    return {
      documentMs: n.responseEnd,
      domInteractiveMs: n.domInteractive,
      appStartMs: open ? open.t : null,
    };
  });
  // Where the time went: the first header page's request as the browser saw it.
  const firstRequest = await page.evaluate(() => {
    const e = performance
      .getEntriesByType('resource')
      .find((r) => r.name.includes('/api/v1/mailboxes/INBOX/messages'));
    return e
      ? {
          start: e.startTime,
          responseEnd: e.responseEnd,
          server: e.serverTiming.map((x) => `${x.name};dur=${x.duration}`).join(', '),
        }
      : null;
  });

  // Scroll to the end with the wheel at once, as a person would (fast), while the rest of the
  // mailbox is still arriving: done when the oldest message's row is shown.
  await page.hover('#list');
  await page.evaluate((sel) => (window.__bench.waits.end = sel), ROW(expect.lastUid));
  const scrollStart = await page.evaluate(() => performance.now());
  for (;;) {
    await page.mouse.wheel(0, 4000);
    await page.waitForTimeout(16);
    const end = await page.evaluate(() => window.__bench.seen.end !== undefined);
    if (end) break;
  }
  const scrollEnd = await seen('end');
  const scrollTasks = await tasks(scrollStart, scrollEnd);
  await page.waitForFunction(() =>
    (window.mailgate.marks || []).some((m) => m.name === 'mg:complete'),
  );
  const allLoaded = (await page.evaluate(() => window.mailgate.marks)).find(
    (m) => m.name === 'mg:complete',
  ).t;

  // Search: typed into the box, then Enter → the first result's row shown.
  await page.click('#q');
  await page.keyboard.type(QUERY);
  await page.evaluate((sel) => (window.__bench.waits.search = sel), ROW(expect.searchUid));
  await page.waitForTimeout(100);
  await page.keyboard.press('Enter');
  const shown = await seen('search');
  const enterAt = await page.evaluate(() => window.__bench.enterAt);
  const count = await page.locator('#list-count').textContent();
  const allTasks = await tasks(0, Infinity);
  await page.close();
  const maxOf = (xs) => xs.reduce((m, e) => Math.max(m, e.ms), 0);
  return {
    firstRowsMs: firstRows,
    ...startup,
    firstRequestStartMs: firstRequest && firstRequest.start,
    firstResponseEndMs: firstRequest && firstRequest.responseEnd,
    firstServerTiming: firstRequest && firstRequest.server,
    allLoadedMs: allLoaded,
    longestTaskMs: maxOf(allTasks),
    scrollMs: scrollEnd - scrollStart,
    longestTaskScrollingMs: maxOf(scrollTasks),
    longTasksScrolling: scrollTasks.length,
    searchShownMs: shown - enterAt,
    searchRowsShown: count,
  };
}

/**
 * `bench web`: see the file comment.
 * @param {string[]} args --runs, --query, --home, --out, --prepare-only, --cpu-throttle
 */
async function main(args) {
  const o = options(args);
  const { RUNS, QUERY, HOME, THROTTLE } = o;
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found (apt-get install chromium)`);
  const env = { ...process.env, MAILGATE_HOME: HOME, LOG_LEVEL: 'error', PWD_VAR: PASSWORD };
  delete env.DATABASE_URL;
  fs.mkdirSync(HOME, { recursive: true });
  try {
    run(['user', 'add', USER, '--password-env', 'PWD_VAR'], env);
  } catch (err) {
    if (!/exists/i.test(err.message)) throw err;
  }
  prepare(env, o);
  // The import is heavy work of its own: run it apart (shared CPU lock), then measure alone.
  if (o.prepareOnly) return;
  const config = loadConfig({ ...env, PORT: '0', HOST: '127.0.0.1' });
  const server = await startServer(config, { signals: false });
  const { chromium } = require('playwright-core');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
  try {
    const login = await fetch(`${server.url}/api/v1/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ user: USER, password: PASSWORD }),
    });
    const { token } = await login.json();
    const runs = [];
    const expect = await expectations(server.url, token, o);
    // One warm-up run (a browser with nothing cached: kept apart as the first visit), then the
    // measured ones (a returning visitor: the versioned scripts and styles are cached).
    // One browser context for all (one HTTP cache, as one person's browser).
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const firstVisit = await measure(context, server.url, token, expect, o);
    process.stderr.write(`first visit: ${JSON.stringify(firstVisit)}\n`);
    for (let i = 0; i < RUNS; i++) {
      runs.push(await measure(context, server.url, token, expect, o));
      process.stderr.write(`run ${i + 1}: ${JSON.stringify(runs.at(-1))}\n`);
    }
    const keys = [
      'firstRowsMs',
      'documentMs',
      'appStartMs',
      'firstRequestStartMs',
      'firstResponseEndMs',
      'searchShownMs',
      'longestTaskScrollingMs',
      'longestTaskMs',
      'scrollMs',
      'allLoadedMs',
    ];
    const summary = {};
    for (const k of keys) {
      const xs = runs.map((r) => r[k]);
      summary[k] = { median: Math.round(median(xs)), max: Math.round(Math.max(...xs)) };
    }
    const out = {
      machine: machineFacts({ work: HOME, config }),
      // Other work on the machine during the run (1, 5, 15 minutes): figures are wall-clock.
      loadAverage: os.loadavg(),
      chromium: await browser.version(),
      cpuThrottle: THROTTLE,
      mailbox: { messages: SIZES.large, build: 'buildMailbox large (mailgate bench)' },
      query: QUERY,
      searchTotal: expect.searchTotal,
      // What each figure is (see pageProbe): times in ms on the page's performance timeline.
      definitions: {
        firstRowsMs: 'navigation start → the newest message row painted',
        searchShownMs: 'Enter keydown (event time) → the first result row painted',
        longestTaskScrollingMs:
          'longest Chromium long task (PerformanceObserver longtask) from the first wheel event ' +
          'to the oldest message row painted; scrolling starts once the first rows show, while ' +
          'the rest of the mailbox still loads',
        longestTaskMs: 'longest long task of the whole run (load, scroll, search)',
      },
      firstVisit,
      runs,
      summary,
      targets: {
        firstRowsMs: 500,
        searchShownMs: 200,
        longestTaskScrollingMs: 100,
      },
    };
    const file = path.resolve(
      o.OUT ||
        path.join(
          ROOT,
          'bench',
          'results',
          `web-${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
        ),
    );
    fs.writeFileSync(file, JSON.stringify(out, null, 2) + '\n');
    process.stdout.write(
      `\nWebmail page, ${SIZES.large}-message INBOX, ${RUNS} runs${THROTTLE > 1 ? `, CPU throttled ${THROTTLE}x` : ''} (median / max):\n`,
    );
    for (const k of keys) {
      const target = out.targets[k] ? ` (target < ${out.targets[k]} ms)` : '';
      process.stdout.write(
        `  ${k.padEnd(24)} ${String(summary[k].median).padStart(6)} / ${String(summary[k].max).padStart(6)} ms${target}\n`,
      );
    }
    process.stdout.write(
      `  search "${QUERY}": ${out.searchTotal} matches\n  written ${path.relative(ROOT, file)}\n`,
    );
  } finally {
    await browser.close();
    await server.close();
  }
}

module.exports = {
  description: 'the webmail page in headless Chromium on the large mailbox',
  usage:
    "[--runs N] [--query 'from:… subject:…'] [--home DIR] [--out FILE] [--prepare-only] [--cpu-throttle N]",
  run: main,
};
