'use strict';

const Fastify = require('fastify');
const webPage = require('../lib/plugins/web-page');
const { loadPageFiles } = require('@mailgate/web');

let app;
beforeAll(async () => {
  app = Fastify();
  await app.register(webPage);
  await app.ready();
});
afterAll(() => app.close());

test('GET / is the page, with a strict CSP and no-sniff', async () => {
  const r = await app.inject({ url: '/' });
  expect(r.statusCode).toBe(200);
  expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(r.body).toMatch(/<script type="module" src="\/v\/[\w-]+\/js\/app\.js">/);
  expect(r.headers['cache-control']).toBe('no-cache');
  const csp = r.headers['content-security-policy'];
  expect(csp).toContain("script-src 'self'");
  expect(csp).not.toMatch(/script-src[^;]*unsafe/);
  expect(csp).toContain("frame-ancestors 'none'");
  expect(r.headers['x-content-type-options']).toBe('nosniff');
});

test('every file of the page is served with its type; a matching ETag gives 304', async () => {
  const files = loadPageFiles();
  expect(files.has('/js/app.js')).toBe(true);
  expect(files.has('/bench.html')).toBe(true);
  for (const [p, f] of files) {
    const r = await app.inject({ url: p });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe(f.type);
    expect(r.rawPayload.equals(f.body)).toBe(true);
  }
  const first = await app.inject({ url: '/js/api.js' });
  const again = await app.inject({
    url: '/js/api.js',
    headers: { 'if-none-match': first.headers.etag },
  });
  expect(again.statusCode).toBe(304);
});

test('the page names its scripts and styles by version: immutable, and new bytes a new path', async () => {
  const html = (await app.inject({ url: '/' })).body;
  const named = [...html.matchAll(/(?:src|href)="(\/v\/[^"]+)"/g)].map((m) => m[1]);
  expect(named.length).toBeGreaterThanOrEqual(6);
  // No unversioned script or style left in the page.
  expect(html).not.toMatch(/(?:src|href)="\/(?:js|css)\//);
  for (const url of named) {
    const r = await app.inject({ url });
    expect(r.statusCode).toBe(200);
    expect(r.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(
      r.rawPayload.equals((await app.inject({ url: url.replace(/^\/v\/[^/]+/, '') })).rawPayload),
    ).toBe(true);
  }
  // Another copy of the page with one byte changed gets another version prefix.
  const fs = require('node:fs');
  const os = require('node:os');
  const path = require('node:path');
  const { PUBLIC_DIR } = require('@mailgate/web');
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'mailgate-page-'));
  try {
    fs.cpSync(PUBLIC_DIR, copy, { recursive: true });
    fs.appendFileSync(path.join(copy, 'js', 'hints.js'), '\n');
    const version = (files) => /\/v\/([^/]+)\//.exec(files.get('/index.html').body.toString())[1];
    expect(version(loadPageFiles(copy))).not.toBe(version(loadPageFiles()));
  } finally {
    fs.rmSync(copy, { recursive: true, force: true });
  }
});

test('nothing outside the page can be reached', async () => {
  for (const url of [
    '/../package.json',
    '/js/../../lib/index.js',
    '/%2e%2e/package.json',
    '/lib/index.js',
  ]) {
    const r = await app.inject({ url });
    expect(r.statusCode).toBe(404);
  }
});
