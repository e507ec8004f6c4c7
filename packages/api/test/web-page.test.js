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
  expect(r.body).toContain('<script type="module" src="/js/app.js">');
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
