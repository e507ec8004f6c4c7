'use strict';

const http = require('node:http');
const net = require('node:net');
const { useApi, req } = require('./helpers');
const { inbox } = require('./fixtures');

// Issue 17 item 5 and 8: every error in the coded shape, including Fastify's and Node's own
// (431, 400, 408, static files), and strict integer parameters.
const t = useApi({ fastify: { requestTimeout: 1500, connectionTimeout: 0 } });
let token;
let base;
beforeAll(async () => {
  token = await t.user('alice');
  await t.mail('alice', 'INBOX', inbox.slice(0, 2));
  base = await t.app.listen({ host: '127.0.0.1', port: 0 });
});

const get = (url) => req(t.app, token, { url });
const coded = (r) => {
  const body = typeof r.body === 'string' ? JSON.parse(r.body) : r.body;
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.code).toMatch(/^[A-Z][A-Z_]+$/);
  expect(typeof body.error.message).toBe('string');
  expect(JSON.stringify(body)).not.toMatch(/statusCode|node_modules|at .*\.js/);
  return [r.statusCode, body.error.code];
};

/** Bytes written as they are on a new connection; resolves with all the server sent until it closed. */
function rawBytes(bytes) {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(u.port), u.hostname, () => s.write(bytes));
    let b = '';
    s.on('data', (d) => (b += d));
    s.on('close', () => resolve(b));
    s.on('error', reject);
  });
}

/** A raw HTTP/1.1 request: the path is sent exactly as given (no normalisation). */
function raw(path, headers = {}) {
  return new Promise((resolve, reject) => {
    const u = new URL(base);
    const r = http.request(
      {
        host: u.hostname,
        port: u.port,
        path,
        headers: { authorization: `Bearer ${token}`, ...headers },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ statusCode: res.statusCode, body, headers: res.headers }));
      },
    );
    r.on('error', reject);
    r.end();
  });
}

describe('strict integers', () => {
  test.each([
    ['/api/v1/mailboxes/INBOX/messages?limit=0x10', 'limit'],
    ['/api/v1/mailboxes/INBOX/messages?limit=1e3', 'limit'],
    ['/api/v1/mailboxes/INBOX/messages?limit=+5', 'limit'],
    ['/api/v1/mailboxes/INBOX/messages?limit=5.0', 'limit'],
    ['/api/v1/mailboxes/INBOX/messages?limit=%205', 'limit'],
    ['/api/v1/mailboxes/INBOX/messages?limit=', 'limit'],
    ['/api/v1/search?limit=0x10', 'limit'],
    ['/api/v1/mailboxes/INBOX/messages/0x1', 'uid'],
    ['/api/v1/mailboxes/INBOX/messages/1e0', 'uid'],
    ['/api/v1/mailboxes/INBOX/messages/0x1/raw', 'uid'],
    ['/api/v1/mailboxes/INBOX/messages/0x1/attachments/1', 'uid'],
  ])('%s is INVALID_PARAMETER', async (url, field) => {
    const r = await get(url);
    expect(coded(r)).toEqual([400, 'INVALID_PARAMETER']);
    expect(r.json().error.message).toContain(field);
  });

  test('decimal integers still work; range errors read as sentences', async () => {
    expect((await get('/api/v1/mailboxes/INBOX/messages?limit=16')).statusCode).toBe(200);
    expect((await get('/api/v1/mailboxes/INBOX/messages/1')).statusCode).toBe(200);
    const r = await get('/api/v1/mailboxes/INBOX/messages?limit=5000');
    expect(coded(r)).toEqual([400, 'INVALID_PARAMETER']);
    expect(r.json().error.message).toBe('limit must be ≤ 1000');
    const o = await get('/api/v1/mailboxes/INBOX/messages?order=size');
    expect(coded(o)).toEqual([400, 'INVALID_PARAMETER']);
    expect(o.json().error.message).toBe('order must be one of: uid, -uid, date, -date');
    const x = await get('/api/v1/mailboxes/INBOX/messages?colour=red');
    expect(x.json().error).toEqual({
      code: 'INVALID_PARAMETER',
      message: 'unknown parameter colour',
    });
  });
});

describe('static files under /docs', () => {
  test.each([
    '/docs/static/../../package.json',
    '/docs/static/%2e%2e/%2e%2e/package.json',
    '/docs/static/%2e%2e%2f%2e%2e%2fpackage.json',
    '/docs/static/..%2f..%2fpackage.json',
    '/docs/static/no-such-file.js',
  ])('%s answers a coded 403/404 and leaks nothing', async (path) => {
    const r = await raw(path);
    const [status] = coded(r);
    expect([403, 404]).toContain(status);
    expect(r.body).not.toMatch(/"name"\s*:\s*"@?mailgate/);
  });
});

describe("Node's and Fastify's own errors", () => {
  test('a URL over the header limit is 431 HEADERS_TOO_LARGE', async () => {
    const r = await raw('/api/v1/search?q=' + 'a'.repeat(20000));
    expect(coded(r)).toEqual([431, 'HEADERS_TOO_LARGE']);
  });

  test('a malformed request line is 400 with a code', async () => {
    const text = await rawBytes('GARBAGE / HTTP/9\r\n\r\n');
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    const body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
    expect(body.error.code).toBe('INVALID_INPUT');
  });

  test('a request whose headers never finish is 408 REQUEST_TIMEOUT', async () => {
    const text = await rawBytes('GET /api/v1/health HTTP/1.1\r\nHost: x\r\n');
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    const body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
    expect(body.error.code).toBe('REQUEST_TIMEOUT');
  });

  test('issue 29.8: a body that trickles in is cut at the request timeout too (408), not at 60 s', async () => {
    const u = new URL(base);
    const text = await new Promise((resolve, reject) => {
      const s = net.connect(Number(u.port), u.hostname);
      let b = '';
      s.on('data', (d) => (b += d));
      s.on('error', reject);
      s.write(
        'POST /api/v1/session HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
          'Content-Length: 1000\r\n\r\n',
      );
      // One byte every 200 ms: the whole body would take 200 s.
      const trickle = setInterval(() => s.writable && s.write(' '), 200);
      // Node's own headersTimeout (60 s) is far beyond this wait; the request timeout of
      // this app (1.5 s, checked every 2 s) is well inside it.
      const give = setTimeout(() => s.destroy(), 20000);
      s.on('close', () => {
        clearInterval(trickle);
        clearTimeout(give);
        resolve(b);
      });
    });
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
  });

  test('unsupported methods and bodies on GET routes answer coded errors', async () => {
    for (const method of ['PUT', 'PATCH', 'OPTIONS', 'TRACE']) {
      const r = await req(t.app, token, { method, url: '/api/v1/mailboxes' });
      expect(coded(r)[0]).toBeGreaterThanOrEqual(400);
      expect(r.statusCode).toBeLessThan(500);
    }
  });
});
