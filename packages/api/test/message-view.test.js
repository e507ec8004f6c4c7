'use strict';

const { setup, req } = require('./helpers');
const { closeRequestPool } = require('@mailgate/mime');

// Issue 17.3, 17.4, 17.7 and 11.6 through the HTTP message view: rendering runs off the event
// loop and within the parse budget; hostile mail answers 200 or a coded 4xx, never 5xx.
let ctx;
let token;
const view = (uid, query = '') =>
  req(ctx.app, token, { method: 'GET', url: `/api/v1/mailboxes/INBOX/messages/${uid}${query}` });

const html = (subject, body) =>
  Buffer.from(
    `From: a@example.org\nSubject: ${subject}\nContent-Type: text/html; charset=utf-8\n\n${body}\n`,
  );
const flood = (n) => html(`flood ${n}`, '<p>hi</p>' + '<a'.repeat(n));
const manyParts = (n) => {
  const parts = [];
  for (let i = 0; i < n; i++) parts.push(`--b\nContent-Type: text/plain\n\npart ${i}\n`);
  return Buffer.from(
    'From: a@example.org\nSubject: parts\nContent-Type: multipart/mixed; boundary=b\n\n' +
      parts.join('') +
      '--b--\n',
  );
};
const withCid = Buffer.from(
  [
    'From: a@example.org',
    'Subject: cid',
    'Content-Type: multipart/related; boundary=r',
    '',
    '--r',
    'Content-Type: text/html',
    '',
    '<p>logo <img src="cid:logo@x"> pixel <img src="http://track.example/p.gif"></p>',
    '--r',
    'Content-Type: image/png; name=logo.png',
    'Content-ID: <logo@x>',
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.from('PNGDATA').toString('base64'),
    '--r--',
    '',
  ].join('\n'),
);

beforeAll(async () => {
  ctx = await setup();
  token = await ctx.user('viewer');
  await ctx.mail('viewer', 'INBOX', [
    flood(80000), // uid 1: 160 KB
    flood(800000), // uid 2: 1.6 MB
    manyParts(5000), // uid 3
    withCid, // uid 4
    html('head', '<html><head><meta charset=utf-8><body><p>visible text</p>'), // uid 5
    html('embed', '<p>before</p><embed src="x.swf"><p>after embed</p>'), // uid 6
  ]);
});
afterAll(async () => {
  await closeRequestPool();
  await ctx.close();
});

test('the <a flood renders (160 KB and 1.6 MB); /health answers while the big one renders', async () => {
  // The bounds (200 ms, 2 s) are budgets for a benchmark, not for a test (issue 30.5):
  // checked here is what they stood for, the view complete and the server not blocked.
  expect((await view(1)).statusCode).toBe(200); // starts the render thread
  const small = await view(1);
  expect(small.statusCode).toBe(200);
  expect(small.json().html).toMatch(/^<p>hi<\/p>/);

  const order = [];
  const big = view(2).then((r) => {
    order.push('view');
    return r;
  });
  const health = await req(ctx.app, null, { method: 'GET', url: '/api/v1/health' });
  order.push('health');
  const r = await big;
  expect(health.statusCode).toBe(200);
  // A render on the event loop would answer the view before the health check could run.
  expect(order).toEqual(['health', 'view']);
  expect(r.statusCode).toBe(200);
  expect(r.json().html).toMatch(/^<p>hi<\/p>/);
});

test('5,000 MIME parts: 200 with the view', async () => {
  const r = await view(3);
  expect(r.statusCode).toBe(200);
  expect(r.json().text).toContain('part 4999');
});

test('remote images blocked by default, images=remote loads them; cid: maps to the attachment URL', async () => {
  const blocked = (await view(4)).json().html;
  expect(blocked).toContain('src="/api/v1/mailboxes/INBOX/messages/4/attachments/2"');
  expect(blocked).not.toMatch(/ src="http:\/\/track/);
  expect(blocked).toContain('data-blocked-src="http://track.example/p.gif"');
  const remote = (await view(4, '?images=remote')).json().html;
  expect(remote).toContain('src="http://track.example/p.gif"');
  const bad = await view(4, '?images=all');
  expect(bad.statusCode).toBe(400);
  expect(bad.json().error.code).toBeTruthy();
  const att = await req(ctx.app, token, {
    method: 'GET',
    url: '/api/v1/mailboxes/INBOX/messages/4/attachments/2',
  });
  expect(att.rawPayload.toString()).toBe('PNGDATA');
});

test('an unclosed <head> and an <embed> keep the visible text', async () => {
  expect((await view(5)).json().html).toContain('<p>visible text</p>');
  expect((await view(6)).json().html).toMatch(/^<p>before<\/p><p>after embed<\/p>\s*$/);
});

test('over the parse budget: 422 MESSAGE_NOT_RENDERABLE, not 500', async () => {
  await closeRequestPool();
  process.env.MAILGATE_PARSE_TIME_MS = '1';
  try {
    const r = await view(2);
    expect(r.statusCode).toBe(422);
    expect(r.json().error).toMatchObject({ code: 'MESSAGE_NOT_RENDERABLE' });
    expect(r.json().error.message).toMatch(/too-complex/);
  } finally {
    delete process.env.MAILGATE_PARSE_TIME_MS;
    await closeRequestPool();
  }
});
