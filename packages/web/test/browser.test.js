'use strict';

/* global window, document -- the functions given to page.evaluate run in the browser */

const { skipNotice } = require('@mailgate/test-support/skip');
const fs = require('node:fs');
const path = require('node:path');
const { hashPassword } = require('@mailgate/core');
const importer = require('@mailgate/importer');
const { addLegacyUser } = require('@mailgate/legacy');
const { createTestDatabase } = require('@mailgate/test-support/db');
const t = require('./support');

/*
 * The page in a real headless Chromium against a real API and PostgreSQL: every step a
 * person takes, each with a screenshot in test-artifacts/browser/. The mailbox holds 2,000
 * messages: 1,998 real ones (SpamAssassin corpus) plus an HTML message with a PDF attachment
 * and a hostile HTML message. The same mbox file is the user's legacy mbox backend, so the
 * backend switch must show the same answer.
 */

const skip = t.chromiumMissing();
if (skip) skipNotice(__filename, skip);
const maybe = skip ? describe.skip : describe;

const USER = 'dave';
const PASSWORD = 'browser test password';
const COUNT = 2000;
const quiet = { info() {}, warn() {}, debug() {}, error() {}, child: () => quiet };

maybe('webmail page in Chromium', () => {
  let db;
  let app;
  let url;
  let browser;
  let home;
  let userId;
  let token;

  const api = async (method, p, body) => {
    const r = await app.inject({
      method,
      url: `/api/v1${p}`,
      headers: { authorization: `Bearer ${token}` },
      ...(body ? { payload: body } : {}),
    });
    return { status: r.statusCode, body: r.json() };
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    home = t.tmpdir();
    const mboxDir = path.join(home, 'mail');
    fs.mkdirSync(mboxDir);
    const inbox = path.join(mboxDir, 'inbox.mbox');
    expect(t.writeMbox(inbox, COUNT - 2, [t.htmlWithAttachment(), t.hostileHtml()])).toBe(COUNT);
    const archive = path.join(mboxDir, 'Archive');
    t.writeMbox(archive, 3);
    await db.store.createUser(USER, { passwordHash: await hashPassword(PASSWORD) });
    const u = await db.store.getUser(USER);
    userId = u.id;
    token = (await db.store.createToken(u.id)).token;
    for (const [file, mailbox] of [
      [inbox, 'INBOX'],
      [archive, 'Archive'],
    ]) {
      await importer.runImport({
        store: db.store,
        kind: 'mbox',
        paths: [file],
        user: USER,
        mailbox,
        workers: 0,
        progress: false,
        log: quiet,
      });
    }
    addLegacyUser(home, USER, { mboxDir });
    ({ app, url, browser } = await t.startSite(db, home));
  });

  afterAll(async () => {
    await t.stopSite({ browser, app, db, home });
  });

  async function signedInPage(shotPrefix) {
    const page = await browser.newPage({ viewport: { width: 1400, height: 850 } });
    page.setDefaultTimeout(15000);
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const shot = t.shooter(page, shotPrefix);
    await page.goto(url);
    await page.waitForSelector('#signin:not([hidden])');
    await shot('signin');
    await page.fill('#signin input[name=user]', USER);
    await page.fill('#signin input[name=password]', PASSWORD);
    await page.click('#signin button[type=submit]');
    await page.waitForSelector('#list .ml-row[data-uid]');
    return { page, shot, errors };
  }

  const listComplete = (page) =>
    page.waitForFunction(() => window.mailgate.marks.some((m) => m.name === 'mg:complete'));
  const rowCount = (page) => page.locator('#list .ml-row[data-uid]:not([hidden])').count();

  test('sign in, scroll 2,000 messages, search, read, flag, switch backend, move, delete and expunge', async () => {
    const { page, shot, errors } = await signedInPage('walk');
    await shot('mailbox');

    // Mailbox list with unread counts, as the store counts them.
    const boxes = await api('GET', '/mailboxes');
    const inboxInfo = boxes.body.mailboxes.find((b) => b.name === 'INBOX');
    expect(inboxInfo.total).toBe(COUNT);
    await expect(
      page.locator('#mailboxes a[data-mailbox="INBOX"] .mb-unseen').textContent(),
    ).resolves.toBe(String(inboxInfo.unseen));

    // Scroll to the end: every row reachable, few in the DOM at any time.
    await listComplete(page);
    await expect(page.locator('#list-count').textContent()).resolves.toBe('2,000 messages');
    await page.evaluate(() => {
      const vp = document.querySelector('#list .ml-viewport');
      vp.scrollTop = vp.scrollHeight;
    });
    // Newest first by date: the last row is the oldest message.
    const oldest = (await api('GET', '/mailboxes/INBOX/messages?order=date&limit=1')).body
      .messages[0].uid;
    await page.waitForSelector(`#list .ml-row[data-uid="${oldest}"]`);
    expect(await rowCount(page)).toBeLessThan(100);
    await shot('scrolled-to-end');

    // Threads: the mailbox grouped by conversation; a thread opens as its messages.
    const threads = await api('GET', '/threads?mailbox=INBOX&limit=5');
    const top = threads.body.threads[0];
    await page.check('#threads');
    await page.waitForFunction(() =>
      document.querySelector('#list-title').textContent.endsWith('threads'),
    );
    await page.waitForSelector('#list .ml-row[data-uid="1"]');
    await expect(page.locator('#list .ml-row[data-uid="1"] .ml-from').textContent()).resolves.toBe(
      top.from.join(', '),
    );
    await shot('threads');
    await page.click('#list .ml-row[data-uid="1"]');
    await page.waitForFunction(
      () => document.querySelector('#list-title').textContent === 'Thread',
    );
    const inThread = await api('GET', `/threads/${top.threadId}`);
    const firstUid = inThread.body.messages[0].uid;
    await page.waitForSelector(`#list .ml-row[data-uid="${firstUid}"]`);
    expect(await rowCount(page)).toBe(top.messages);
    await shot('thread');
    await page.uncheck('#threads');

    // Search with two operators, hints while typing.
    await page.click('#q');
    await page.keyboard.type('from:carol sub');
    await expect(page.locator('#hints .hint code').first().textContent()).resolves.toBe('subject:');
    await shot('search-hints');
    await page.keyboard.type('ject:quarterly');
    await page.keyboard.press('Enter');
    const q = 'from:carol subject:quarterly';
    const expected = await db.store.search(userId, q, {});
    expect(expected.total).toBe(1);
    const uid = expected.hits[0].uid;
    await page.waitForSelector(`#list .ml-row[data-uid="${uid}"]`);
    expect(await rowCount(page)).toBe(expected.total);
    await shot('search-results');

    // Open it: sanitised HTML in the sandboxed frame, the attachment downloads.
    await page.click(`#list .ml-row[data-uid="${uid}"]`);
    await page.waitForSelector('#view iframe.body-html');
    const frame = page.frameLocator('#view iframe.body-html');
    await expect(frame.locator('h1').textContent()).resolves.toBe('Quarterly figures');
    expect(await page.getAttribute('#view iframe.body-html', 'sandbox')).not.toContain(
      'allow-scripts',
    );
    const att = page.locator('#view button.attachment');
    await expect(att.textContent()).resolves.toContain('Download report.pdf');
    const [download] = await Promise.all([page.waitForEvent('download'), att.click()]);
    expect(download.suggestedFilename()).toBe('report.pdf');
    const pdf = fs.readFileSync(await download.path());
    expect(pdf.subarray(0, 8).toString()).toBe('%PDF-1.4');
    await page.click('#show-raw');
    await page.waitForSelector('#raw:not([hidden])');
    await expect(page.locator('#raw').textContent()).resolves.toContain(
      'Subject: Quarterly report with chart',
    );
    await shot('message');

    // Flag it: the button, the row and the store agree.
    await page.click('#flag');
    await page.waitForSelector('#flag[aria-pressed="true"]');
    await page.waitForSelector(`#list .ml-row[data-uid="${uid}"] .ml-flags:has-text("★")`);
    const stored = await api('GET', `/mailboxes/INBOX/messages/${uid}`);
    expect(stored.body.flags).toEqual(expect.arrayContaining(['\\Flagged', '\\Seen']));
    await shot('flagged');

    // Backend switch: the same search on the legacy mbox path gives the same message.
    await page.selectOption('#backend', 'mbox');
    await page.waitForFunction(
      () => window.mailgate.marks.filter((m) => m.name === 'mg:firstrows').length >= 3,
    );
    await page.waitForSelector(`#list .ml-row[data-uid="${uid}"]`);
    await expect(page.locator('#last-timing').textContent()).resolves.toMatch(/^mbox: server \d/);
    await page.click('#compare');
    await page.waitForSelector(
      '#compare-rows tr[data-backend="mbox"][data-same="true"][data-answered-by="mbox"]',
    );
    await page.waitForSelector('#compare-rows tr[data-backend="pg"][data-answered-by="pg"]');
    await page.waitForSelector('#compare-rows tr[data-backend="imap"][data-same]');
    await shot('compare-backends');
    await page.click('#compare-dialog button');

    // The switch shows who answered as the server's Server-Timing names it, not what was
    // asked: an answer claiming another backend shows as such.
    await page.route(/[?&]backend=mbox/, async (route) => {
      const r = await route.fetch();
      await route.fulfill({
        response: r,
        headers: { ...r.headers(), 'server-timing': 'imap;dur=1.00;desc="backend imap"' },
      });
    });
    await page.selectOption('#backend', 'pg');
    await page.waitForFunction(() =>
      document.querySelector('#last-timing').textContent.startsWith('pg: server'),
    );
    await page.selectOption('#backend', 'mbox');
    await page.waitForFunction(() =>
      document.querySelector('#last-timing').textContent.startsWith('imap (asked mbox): server'),
    );
    await page.unroute(/[?&]backend=mbox/);
    await page.selectOption('#backend', 'pg');

    // Move the report to Archive: gone from the search (INBOX), present in Archive.
    await page.click(`#list .ml-row[data-uid="${uid}"]`);
    await page.waitForSelector('#view #move-target');
    await page.selectOption('#view #move-target', 'Archive');
    await page.click('#view #move');
    await page.waitForSelector(`#list .ml-row[data-uid="${uid}"]`, { state: 'detached' });
    await expect(page.locator('#status').textContent()).resolves.toBe('Moved to Archive');
    expect((await api('GET', `/mailboxes/INBOX/messages/${uid}`)).status).toBe(404);
    const archived = await db.store.search(userId, 'in:Archive subject:quarterly', {});
    expect(archived.total).toBe(1);
    await shot('moved');
    await page.click('#mailboxes a[data-mailbox="Archive"]');
    await page.waitForSelector(
      `#list .ml-row[data-uid="${archived.hits[0].uid}"] .ml-flags:has-text("★")`,
    );
    await shot('archive');

    // Delete and expunge a message of the mailbox (last imported first: uid 1995 near the top).
    await page.click('#mailboxes a[data-mailbox="INBOX"]');
    await page.selectOption('#order', '-uid');
    await page.waitForSelector('#list .ml-row[data-uid="1995"]');
    await page.click('#list .ml-row[data-uid="1995"]');
    await page.waitForSelector('#view #delete');
    await page.click('#view #delete');
    await page.waitForSelector('#list .ml-row[data-uid="1995"].ml-deleted');
    await shot('deleted');
    await page.click('#expunge');
    await page.click('#expunge-confirm');
    await page.waitForSelector('#list .ml-row[data-uid="1995"]', { state: 'detached' });
    await expect(page.locator('#status').textContent()).resolves.toBe('Expunged 1 message(s)');
    expect((await api('GET', '/mailboxes/INBOX/messages/1995')).status).toBe(404);
    await shot('expunged');

    expect(errors).toEqual([]);
    await page.close();
  });

  test('a returning visit asks for the first header page while the page loads, once', async () => {
    const { page, errors } = await signedInPage('reload');
    await page.reload();
    await page.waitForSelector('#list .ml-row[data-uid]');
    const r = await page.evaluate(() => {
      const first = performance
        .getEntriesByType('resource')
        .filter((e) => e.name.endsWith('/api/v1/mailboxes/INBOX/messages?order=-date&limit=60'));
      const open = window.mailgate.marks.find((m) => m.name === 'mg:open-mailbox');
      return { count: first.length, start: first[0] && first[0].startTime, open: open.t };
    });
    // boot.js sent it before the modules ran; the app took that answer instead of asking again.
    expect(r.count).toBe(1);
    expect(r.start).toBeLessThan(r.open);
    const total = (await api('GET', '/mailboxes')).body.mailboxes.find(
      (b) => b.name === 'INBOX',
    ).total;
    await expect(page.locator('#list-count').textContent()).resolves.toContain(
      total.toLocaleString('en-US'),
    );
    expect(errors).toEqual([]);
    await page.close();
  });

  test('the benchmark page renders a run: a table and a chart per request', async () => {
    const file = path.join(
      __dirname,
      '..',
      '..',
      '..',
      'bench',
      'results',
      'full-2026-11-23',
      'results.json',
    );
    const run = JSON.parse(fs.readFileSync(file, 'utf8'));
    const groups = new Set(run.results.map((r) => `${r.request}-${r.phase}`));
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${url}/bench.html`);
    await page.setInputFiles('#file', file);
    await page.waitForSelector('section.request');
    expect(await page.locator('section.request').count()).toBe(groups.size);
    const one = run.results.find(
      (r) =>
        r.request === 'headers' && r.phase === 'warm' && r.backend === 'pg' && r.size === 'large',
    );
    const cells = page.locator(
      'section.request[data-request="headers-warm"] tbody tr:first-child td',
    );
    await expect(cells.first().textContent()).resolves.toBe('pg');
    await expect(cells.last().textContent()).resolves.toBe(`${Math.round(one.ms.median)} ms`);
    expect(
      await page.locator('section.request[data-request="headers-warm"] svg rect').count(),
    ).toBeGreaterThan(3);
    await t.shooter(page, 'bench')('results');
    expect(errors).toEqual([]);
    await page.close();
  });

  test('a script in a hostile HTML mail never runs in the page', async () => {
    const { page, shot, errors } = await signedInPage('hostile');
    const dialogs = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      d.dismiss();
    });
    const consoleLines = [];
    page.on('console', (m) => consoleLines.push(m.text()));
    await page.evaluate(() => {
      window.pwned = [];
      window.addEventListener('message', (e) => window.pwned.push(String(e.data)));
    });
    const hostile = await db.store.search(userId, 'from:mallory', {});
    expect(hostile.total).toBe(1);
    const uid = hostile.hits[0].uid;
    await page.fill('#q', 'from:mallory');
    await page.press('#q', 'Enter');
    await page.click(`#list .ml-row[data-uid="${uid}"]`);
    await page.waitForSelector('#view iframe.body-html');
    const frame = page.frameLocator('#view iframe.body-html');
    await expect(frame.locator('p').first().textContent()).resolves.toBe('Nothing to see');
    await page.waitForTimeout(500);
    await shot('hostile-message');

    // The same frame with HTML that never went through the sanitiser: the sandbox and the CSP
    // alone must stop it.
    await page.evaluate(async () => {
      // The page's own module instance (its versioned path), not a second copy.
      const app = document.querySelector('script[type=module]').src;
      const view = await import(app.replace(/app\.js$/, 'message-view.js'));
      view.renderMessage(
        document.getElementById('view'),
        {
          uid: 1,
          subject: 'raw',
          flags: [],
          html:
            '<p id="raw-bait">raw</p><script>top.document.title="PWNED-raw";alert(2)</script>' +
            '<img src=x onerror="top.document.title=\'PWNED-raw-img\'">',
        },
        { mailbox: 'INBOX', mailboxes: ['INBOX'] },
      );
    });
    await page.waitForSelector('#view iframe.body-html');
    await expect(
      page.frameLocator('#view iframe.body-html').locator('#raw-bait').textContent(),
    ).resolves.toBe('raw');
    await page.waitForTimeout(500);
    await shot('unsanitised-frame');

    expect(await page.title()).toBe('mailgate');
    expect(dialogs).toEqual([]);
    expect(await page.evaluate(() => window.pwned)).toEqual([]);
    // Chromium says why the raw script did not run.
    expect(consoleLines.join('\n')).toMatch(/Blocked script execution|Content Security Policy/);
    expect(errors).toEqual([]);
    await page.close();
  });
});
