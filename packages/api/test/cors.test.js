'use strict';

const { useApi, req } = require('./helpers');
const { loadConfig } = require('@mailgate/core');

/* CORS: no cross-origin access unless MAILGATE_CORS_ORIGINS names the origin. */

const GOOD = 'https://mail.example.org';
const EVIL = 'https://evil.example';

const preflight = (app, origin, method = 'GET', url = '/api/v1/mailboxes') =>
  app.inject({
    method: 'OPTIONS',
    url,
    headers: {
      origin,
      'access-control-request-method': method,
      'access-control-request-headers': 'authorization',
    },
  });

describe('with MAILGATE_CORS_ORIGINS set', () => {
  const t = useApi({
    corsOrigins: loadConfig({ MAILGATE_CORS_ORIGINS: `${GOOD}/, http://localhost:5173` })
      .corsOrigins,
  });
  let token;
  beforeAll(async () => {
    token = await t.user('alice');
  });

  test('a preflight from an allowed origin is answered for every route, methods and headers listed', async () => {
    for (const [method, url] of [
      ['GET', '/api/v1/mailboxes'],
      ['POST', '/api/v1/mailboxes/INBOX/move'],
      ['PATCH', '/api/v1/mailboxes/INBOX'],
      ['DELETE', '/api/v1/mailboxes/Old'],
    ]) {
      const r = await preflight(t.app, GOOD, method, url);
      expect(r.statusCode).toBe(204);
      expect(r.headers['access-control-allow-origin']).toBe(GOOD);
      expect(r.headers['access-control-allow-methods']).toContain(method);
      expect(r.headers['access-control-allow-headers'].toLowerCase()).toContain('authorization');
    }
  });

  test('answers to an allowed origin carry its name and expose Server-Timing; 401s too', async () => {
    const ok = await req(t.app, token, { url: '/api/v1/mailboxes', headers: { origin: GOOD } });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe(GOOD);
    expect(ok.headers['access-control-expose-headers']).toContain('Server-Timing');
    expect(ok.headers.vary).toContain('Origin');
    const denied = await req(t.app, null, { url: '/api/v1/mailboxes', headers: { origin: GOOD } });
    expect(denied.statusCode).toBe(401);
    expect(denied.headers['access-control-allow-origin']).toBe(GOOD);
  });

  test('another origin gets no CORS headers, and its preflight is a coded 403', async () => {
    const r = await req(t.app, token, { url: '/api/v1/mailboxes', headers: { origin: EVIL } });
    expect(r.headers['access-control-allow-origin']).toBeUndefined();
    const p = await preflight(t.app, EVIL);
    expect(p.statusCode).toBe(403);
    expect(p.json().error.code).toBe('FORBIDDEN');
    expect(p.headers['access-control-allow-origin']).toBeUndefined();
  });

  test('OPTIONS that is not a preflight is a coded 400', async () => {
    const r = await t.app.inject({ method: 'OPTIONS', url: '/api/v1/mailboxes' });
    expect(r.statusCode).toBe(400);
    expect(r.json().error.code).toBe('INVALID_INPUT');
  });
});

describe('by default (no origins)', () => {
  const t = useApi({ corsOrigins: loadConfig({}).corsOrigins });

  test('no origin is allowed', async () => {
    const p = await preflight(t.app, GOOD);
    expect(p.statusCode).toBe(403);
    expect(p.headers['access-control-allow-origin']).toBeUndefined();
    const r = await t.app.inject({ url: '/api/v1/health', headers: { origin: GOOD } });
    expect(r.statusCode).toBe(200);
    expect(r.headers['access-control-allow-origin']).toBeUndefined();
  });
});

test('MAILGATE_CORS_ORIGINS must hold origins', () => {
  expect(() => loadConfig({ MAILGATE_CORS_ORIGINS: 'mail.example.org' })).toThrow(/not an origin/);
  expect(loadConfig({ MAILGATE_CORS_ORIGINS: '*' }).corsOrigins).toEqual(['*']);
  expect(loadConfig({}).corsOrigins).toEqual([]);
});
