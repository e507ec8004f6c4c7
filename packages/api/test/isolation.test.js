'use strict';

const { useApi, req } = require('./helpers');
const { inbox } = require('./fixtures');
const { msg } = require('@mailgate/test-support/mail');

// User A has mailboxes INBOX (5 messages) and Private; user B has only INBOX with 2
// messages. B must get 404 for everything that names A's mailboxes or messages, and B's
// searches must never return A's mail.
const t = useApi();
let a;
let b;
beforeAll(async () => {
  a = await t.user('usera');
  b = await t.user('userb');
  await t.mail('usera', 'INBOX', inbox);
  await t.mail('usera', 'Private', [msg({ subject: 'secret plans', body: 'zanzibar\n' })]);
  await t.mail('userb', 'INBOX', [msg({ subject: 'b one' }), msg({ subject: 'b two' })]);
});

const code = (r) => [r.statusCode, r.json().error && r.json().error.code];

test('B gets 404 on every route naming A’s mailbox', async () => {
  const gets = [
    '/api/v1/mailboxes/Private/messages',
    '/api/v1/mailboxes/Private/messages/1',
    '/api/v1/mailboxes/Private/messages/1/raw',
    '/api/v1/mailboxes/Private/messages/1/attachments/1',
    '/api/v1/search?mailbox=Private',
  ];
  for (const url of gets) {
    expect(code(await req(t.app, b, { url }))).toEqual([404, 'MAILBOX_NOT_FOUND']);
    if (!url.includes('attachments')) expect((await req(t.app, a, { url })).statusCode).toBe(200);
  }
  const nd = await req(t.app, b, {
    url: '/api/v1/mailboxes/Private/messages',
    headers: { accept: 'application/x-ndjson' },
  });
  expect(code(nd)).toEqual([404, 'MAILBOX_NOT_FOUND']);
  for (const [url, payload] of [
    ['/api/v1/mailboxes/Private/flags', { uids: [1], add: ['\\Deleted'] }],
    ['/api/v1/mailboxes/Private/flags', { q: '', add: ['\\Deleted'] }],
    ['/api/v1/mailboxes/Private/expunge', {}],
  ]) {
    expect(code(await req(t.app, b, { method: 'POST', url, payload }))).toEqual([
      404,
      'MAILBOX_NOT_FOUND',
    ]);
  }
});

test('B gets 404 for A’s message uids through B’s own mailbox of the same name', async () => {
  for (const uid of [3, 4, 5]) {
    for (const suffix of ['', '/raw', '/attachments/2']) {
      const r = await req(t.app, b, { url: `/api/v1/mailboxes/INBOX/messages/${uid}${suffix}` });
      expect(code(r)).toEqual([404, 'MESSAGE_NOT_FOUND']);
    }
  }
  // A sees its own message 2 and attachment.
  const own = await req(t.app, a, { url: '/api/v1/mailboxes/INBOX/messages/2/attachments/2' });
  expect(own.statusCode).toBe(200);
});

test('B’s flag changes and expunges never touch A’s messages', async () => {
  const r = await req(t.app, b, {
    method: 'POST',
    url: '/api/v1/mailboxes/INBOX/flags',
    payload: { uids: [1, 2, 3, 4, 5], add: ['\\Deleted'] },
  });
  expect(r.json().matched).toBe(2); // only B's two messages
  const q = await req(t.app, b, {
    method: 'POST',
    url: '/api/v1/mailboxes/INBOX/flags',
    payload: { q: 'subject:quarterly', add: ['\\Deleted'] },
  });
  expect(q.json().matched).toBe(0);
  const ex = await req(t.app, b, {
    method: 'POST',
    url: '/api/v1/mailboxes/INBOX/expunge',
    payload: { uids: [1, 2, 3, 4, 5] },
  });
  expect(ex.json().expunged).toEqual([1, 2]);
  await t.app.purger.idle();
  const mine = (await req(t.app, a, { url: '/api/v1/mailboxes/INBOX/messages?order=uid' })).json();
  expect(mine.messages.map((m) => m.uid)).toEqual([1, 2, 3, 4, 5]);
  expect(mine.messages.every((m) => !m.flags.includes('\\Deleted'))).toBe(true);
});

test('B’s search never returns A’s mail', async () => {
  for (const q of [
    '',
    'zanzibar',
    'subject:secret',
    'happy',
    'text:a',
    'from:example OR from:corp',
    '-is:deleted',
  ]) {
    const r = (await req(t.app, b, { url: `/api/v1/search?q=${encodeURIComponent(q)}` })).json();
    for (const m of r.messages) expect(m.subject).toMatch(/^b /);
    expect(r.mailboxes.every((x) => x.mailbox === 'INBOX')).toBe(true);
    expect(r.total).toBeLessThanOrEqual(2);
  }
  // in: of A's mailbox is, for B, a mailbox that does not exist: the same coded error as
  // any unknown name (issue 11), so nothing about A leaks.
  for (const q of ['in:Private', 'in:NoSuchBox']) {
    const r = await req(t.app, b, { url: `/api/v1/search?q=${encodeURIComponent(q)}` });
    expect(code(r)).toEqual([400, 'INVALID_QUERY']);
  }
  expect((await req(t.app, a, { url: '/api/v1/search?q=zanzibar' })).json().total).toBe(1);
});

test('B’s mailbox list shows only B’s mailboxes', async () => {
  const r = (await req(t.app, b, { url: '/api/v1/mailboxes' })).json();
  expect(r.mailboxes.map((m) => m.name)).toEqual(['INBOX']);
});
