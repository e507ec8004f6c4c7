'use strict';
/* global document -- the function given to page.waitForFunction runs in the browser */

/*
 * The migration view in a real browser (issue 33 item 3): /migration.html asks for the admin
 * token, then shows the fleet's figures from GET /api/v1/migration (accounts per state,
 * messages, rate, ETA, the running accounts, every failure with its reason, every account) and
 * follows them live: an account that makes progress and one that cuts over are shown without a
 * reload. The accounts are registered and moved through the store's fleet operations the
 * workers use. A user's token is refused (FORBIDDEN), as is no token. Screenshot:
 * docs/webmail/migration.png (`npm run screenshots:web`).
 */

const { skipNotice } = require('@mailgate/test-support/skip');
const { createTestDatabase } = require('@mailgate/test-support/db');
const t = require('./support');

const missing = t.chromiumMissing();
if (missing) skipNotice(__filename, missing);
const d = missing ? describe.skip : describe;

const ADMIN = 'admin-token-for-the-migration-view';

d('migration view', () => {
  let db;
  let home;
  let app;
  let url;
  let browser;
  const ids = {};

  beforeAll(async () => {
    db = await createTestDatabase();
    home = t.tmpdir();
    const s = db.store;
    const acct = (user, port = 143) => ({
      user,
      host: 'imap.old.example',
      port,
      login: user,
      passwordSource: `env:PW_${user.toUpperCase().replace(/-/g, '_')}`,
      security: 'starttls',
      folders: null,
    });
    for (const u of ['allen-p', 'arora-h', 'badeer-r', 'gay-r', 'lokay-m']) {
      ids[u] = (await s.registerMigrationAccount(acct(u))).userId;
    }
    const ago = (sec) => new Date(Date.now() - sec * 1000);
    await s.updateMigrationAccount(ids['allen-p'], {
      state: 'cutover',
      messages: 302,
      bytes: 1258291,
      upstream_messages: 302,
      upstream_bytes: 1258291,
      started_at: ago(40),
      finished_at: ago(30),
    });
    await s.setRoute('allen-p', 'store');
    await s.updateMigrationAccount(ids['arora-h'], {
      state: 'running',
      worker: 'mig-1:4711',
      messages: 20,
      bytes: 81920,
      upstream_messages: 50,
      started_at: ago(10),
    });
    await s.updateMigrationAccount(ids['badeer-r'], {
      state: 'failed',
      attempts: 5,
      error_code: 'UPSTREAM_IMAP_FAILED',
      error_message:
        'Gave up after 5 attempts: Upstream IMAP server imap.old.example:143: ECONNREFUSED',
      finished_at: ago(5),
    });
    ({ app, url, browser } = await t.startSite(db, home, { adminToken: ADMIN }));
  });

  afterAll(async () => {
    await t.stopSite({ browser, app, db, home });
  });

  test('GET /api/v1/migration needs the admin token', async () => {
    const user = await db.store.createUser('someone', {});
    const token = (await db.store.createToken(user.id)).token;
    const as = (auth) =>
      app.inject({
        url: '/api/v1/migration',
        headers: auth ? { authorization: `Bearer ${auth}` } : {},
      });
    expect((await as(null)).statusCode).toBe(401);
    const forbidden = await as(token);
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json().error.code).toBe('FORBIDDEN');
    const ok = await as(ADMIN);
    expect(ok.statusCode).toBe(200);
    expect(ok.json().fleet).toMatchObject({
      accounts: 5,
      queued: 2,
      running: 1,
      cutover: 1,
      failed: 1,
      messages: 322,
    });
  });

  test('shows the fleet, the running account, the failure and every account, live', async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    page.setDefaultTimeout(15000);
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const shot = t.shooter(page, 'migration');
    await page.goto(`${url}/migration.html`);
    await page.fill('#token', ADMIN);
    await page.click('#token-form button[type=submit]');
    await page.waitForSelector('#view:not([hidden]) [data-figure=accounts]');
    const figure = (k) => page.locator(`[data-figure=${k}] b`).textContent();
    expect(await figure('accounts')).toBe('5');
    expect(await figure('cutover')).toBe('1');
    expect(await figure('failed')).toBe('1');
    expect(await figure('running')).toBe('1');
    expect(await figure('messages')).toBe('322');
    expect(await page.locator('#running tbody tr').count()).toBe(1);
    expect(await page.locator('#running tbody td').first().textContent()).toBe('arora-h');
    expect(await page.locator('#failures tbody td').last().textContent()).toMatch(
      /^UPSTREAM_IMAP_FAILED: Gave up after 5 attempts: .*ECONNREFUSED$/,
    );
    expect(await page.locator('#accounts tbody tr').count()).toBe(5);

    // The worker moves on: arora-h imports the rest and cuts over, gay-r starts. No reload.
    await db.store.addMigrationProgress(ids['arora-h'], 30, 122880);
    await db.store.updateMigrationAccount(ids['arora-h'], {
      state: 'cutover',
      upstream_bytes: 204800,
      finished_at: new Date(),
    });
    await db.store.setRoute('arora-h', 'store');
    await db.store.updateMigrationAccount(ids['gay-r'], {
      state: 'running',
      worker: 'mig-2:4712',
      messages: 12,
      bytes: 40960,
      upstream_messages: 121,
      started_at: new Date(Date.now() - 3000),
    });
    await page.waitForFunction(
      () => document.querySelector('[data-figure=cutover] b').textContent === '2',
    );
    expect(await figure('messages')).toBe('364');
    expect(await page.locator('#running tbody td').first().textContent()).toBe('gay-r');
    await shot('view');
    expect(errors).toEqual([]);
    await page.close();
  });
});
