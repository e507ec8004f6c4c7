#!/usr/bin/env node
'use strict';

/* global window, document -- the functions given to page.evaluate run in the browser */

/*
 * Webmail page benchmark (npm run bench:web): the 2003 study's large mailbox (the first
 * 21,282 Enron messages in path order, built by @mailgate/bench's buildMailbox exactly as
 * `mailgate bench` builds it) imported once into a scratch MAILGATE_HOME, `mailgate serve`'s
 * server started in this process, and the page driven in headless Chromium (Debian's
 * /usr/bin/chromium through playwright-core). Per run, on a fresh page:
 *   - navigation to the first rows shown (the page's own performance marks: time since
 *     navigation start until the frame after the first rows were rendered);
 *   - a search typed into the box: Enter to its first rows shown;
 *   - the whole list loaded, then scrolled to the end with the mouse wheel: the longest task on
 *     Chromium's performance timeline (PerformanceObserver 'longtask', ≥ 50 ms) while loading and
 *     while scrolling.
 * A benchmark, not a test: figures are printed and written to bench/results/web-<time>.json.
 *
 *   npm run bench:web [-- --runs N] [--query 'from:enron.com subject:meeting'] [--home DIR]
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { corpusDir } = require('../test/support/corpus');
const { run } = require('./lib/run-cli');
const { machineFacts } = require('@mailgate/bench');
const { buildMailbox, SIZES } = require('@mailgate/bench');
const { loadConfig } = require('@mailgate/core');
const { startServer } = require('@mailgate/api');

const ROOT = path.resolve(__dirname, '..');
const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const RUNS = Number(opt('--runs', 5));
const QUERY = opt('--query', 'from:enron.com subject:meeting');
const HOME = path.resolve(opt('--home', path.join(os.tmpdir(), 'mailgate-bench-web')));
const CHROMIUM = process.env.MAILGATE_CHROMIUM || '/usr/bin/chromium';
const USER = 'bench-web';
const PASSWORD = 'bench-web-password';

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : null;
}

/** The large mailbox in the scratch home, imported once (a re-run reuses it). */
function prepare(env) {
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

async function measure(browser, url, token) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.setDefaultTimeout(120000);
  // Signed in already (the token in sessionStorage), so navigation goes straight to the list.
  await page.addInitScript((t) => {
    sessionStorage.setItem('mailgate.token', t);
    window.__longtasks = [];
    new PerformanceObserver((l) => {
      for (const e of l.getEntries()) {
        window.__longtasks.push({ start: e.startTime, ms: e.duration });
      }
    }).observe({ type: 'longtask', buffered: true });
  }, token);
  const marks = (name) =>
    page.evaluate((n) => window.mailgate.marks.filter((m) => m.name === n), name);
  const waitMarks = (name, n) =>
    page.waitForFunction(
      ([m, k]) => window.mailgate && window.mailgate.marks.filter((x) => x.name === m).length >= k,
      [name, n],
    );

  await page.goto(`${url}/#mailbox=INBOX`);
  await waitMarks('mg:firstrows-shown', 1);
  const firstRows = (await marks('mg:firstrows-shown'))[0].t;
  // Where the time went: the page's modules loaded and ran (its first request leaves), then
  // the API's first page and the paint.
  const appStart = (await marks('mg:open-mailbox'))[0].t;

  // Everything loaded (background pages), then the long tasks so far are the load's.
  await waitMarks('mg:complete', 1);
  const loadedAt = (await marks('mg:complete'))[0].t;
  const loadTasks = await page.evaluate(() => window.__longtasks.slice());

  // Scroll to the end with the wheel, as a person would (fast).
  await page.hover('#list');
  const scrollStart = await page.evaluate(() => performance.now());
  for (;;) {
    await page.mouse.wheel(0, 4000);
    await page.waitForTimeout(16);
    const atEnd = await page.evaluate(() => {
      const vp = document.querySelector('#list .ml-viewport');
      return vp.scrollTop + vp.clientHeight >= vp.scrollHeight - 2;
    });
    if (atEnd) break;
  }
  await page.waitForSelector('#list .ml-row[data-uid="1"]');
  const scrollEnd = await page.evaluate(() => performance.now());
  const scrollTasks = await page.evaluate(
    (t0) => window.__longtasks.filter((e) => e.start >= t0),
    scrollStart,
  );

  // Search: type, then Enter → first rows shown.
  await page.click('#q');
  await page.keyboard.type(QUERY);
  const before = (await marks('mg:firstrows-shown')).length;
  await page.keyboard.press('Enter');
  await waitMarks('mg:firstrows-shown', before + 1);
  const s = (await marks('mg:search')).at(-1).t;
  const shown = (await marks('mg:firstrows-shown'))[before].t;
  const count = await page.locator('#list-count').textContent();
  await page.close();
  const maxOf = (xs) => xs.reduce((m, e) => Math.max(m, e.ms), 0);
  return {
    firstRowsMs: firstRows,
    appStartMs: appStart,
    allLoadedMs: loadedAt,
    longestTaskLoadingMs: maxOf(loadTasks),
    scrollMs: scrollEnd - scrollStart,
    longestTaskScrollingMs: maxOf(scrollTasks),
    longTasksScrolling: scrollTasks.length,
    searchShownMs: shown - s,
    searchCount: count,
  };
}

async function main() {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found (apt-get install chromium)`);
  const env = { ...process.env, MAILGATE_HOME: HOME, LOG_LEVEL: 'error', PWD_VAR: PASSWORD };
  delete env.DATABASE_URL;
  fs.mkdirSync(HOME, { recursive: true });
  try {
    run(['user', 'add', USER, '--password-env', 'PWD_VAR'], env);
  } catch (err) {
    if (!/exists/i.test(err.message)) throw err;
  }
  prepare(env);
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
    // One warm-up run (cold browser and caches), then the measured ones.
    await measure(browser, server.url, token);
    for (let i = 0; i < RUNS; i++) {
      runs.push(await measure(browser, server.url, token));
      process.stderr.write(`run ${i + 1}: ${JSON.stringify(runs.at(-1))}\n`);
    }
    const keys = [
      'firstRowsMs',
      'appStartMs',
      'searchShownMs',
      'longestTaskLoadingMs',
      'longestTaskScrollingMs',
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
      mailbox: { messages: SIZES.large, build: 'buildMailbox large (mailgate bench)' },
      query: QUERY,
      searchCount: runs[0].searchCount,
      runs,
      summary,
      targets: {
        firstRowsMs: 500,
        searchShownMs: 200,
        longestTaskScrollingMs: 100,
      },
    };
    const file = path.join(
      ROOT,
      'bench',
      'results',
      `web-${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
    );
    fs.writeFileSync(file, JSON.stringify(out, null, 2) + '\n');
    process.stdout.write(
      `\nWebmail page, ${SIZES.large}-message INBOX, ${RUNS} runs (median / max):\n`,
    );
    for (const k of keys) {
      const target = out.targets[k] ? ` (target < ${out.targets[k]} ms)` : '';
      process.stdout.write(
        `  ${k.padEnd(24)} ${String(summary[k].median).padStart(6)} / ${String(summary[k].max).padStart(6)} ms${target}\n`,
      );
    }
    process.stdout.write(
      `  search "${QUERY}": ${out.searchCount}\n  written ${path.relative(ROOT, file)}\n`,
    );
  } finally {
    await browser.close();
    await server.close();
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`);
  process.exit(1);
});
