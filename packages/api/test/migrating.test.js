'use strict';

const { useApi, req } = require('./helpers');
const { msg } = require('@mailgate/test-support/mail');

/*
 * A user routed to `proxy` is being migrated: `mailgate migrate` imports their upstream
 * account into the store, keeping its UIDs and flags. Writes to the store copy meanwhile would
 * race that import (a kept UID taken, flags overwritten by the flag sync, verification
 * failing), so the service refuses them with 409 MAILBOX_MIGRATING; reads stay allowed; after
 * the cutover (route `store`) writes work again.
 */
const t = useApi();
let tok;
beforeAll(async () => {
  tok = await t.user('mia');
  await t.mail('mia', 'INBOX', [msg({ subject: 'one' }), msg({ subject: 'two' })]);
  await t.mail('mia', 'Archive', [msg({ subject: 'old' })]);
  await t.db.store.setRoute('mia', 'proxy');
});

const code = (r) => [r.statusCode, r.json().error && r.json().error.code];
const post = (url, payload) => req(t.app, tok, { method: 'POST', url, payload });

test('writes to a migrating account are refused with 409 MAILBOX_MIGRATING, nothing changes', async () => {
  const before = await req(t.app, tok, { url: '/api/v1/mailboxes/INBOX/messages' });
  expect(before.statusCode).toBe(200);
  const writes = [
    () => post('/api/v1/mailboxes/INBOX/flags', { uids: [1], add: ['\\Seen'] }),
    () => post('/api/v1/mailboxes/INBOX/flags', { q: 'subject:one', add: ['\\Deleted'] }),
    () => post('/api/v1/mailboxes/INBOX/expunge', { uids: [1] }),
    () => post('/api/v1/mailboxes/INBOX/copy', { uids: [1], target: 'Archive' }),
    () => post('/api/v1/mailboxes/INBOX/move', { uids: [2], target: 'Archive' }),
    () =>
      req(t.app, tok, {
        method: 'POST',
        url: '/api/v1/mailboxes/INBOX/messages',
        headers: { 'content-type': 'message/rfc822' },
        payload: msg({ subject: 'appended' }),
      }),
    () => post('/api/v1/mailboxes', { name: 'New' }),
    () =>
      req(t.app, tok, {
        method: 'PATCH',
        url: '/api/v1/mailboxes/Archive',
        payload: { name: 'Old' },
      }),
    () => req(t.app, tok, { method: 'DELETE', url: '/api/v1/mailboxes/Archive' }),
  ];
  for (const w of writes) {
    const r = await w();
    expect(code(r)).toEqual([409, 'MAILBOX_MIGRATING']);
    expect(r.json().error.message).toMatch(/being migrated/);
  }
  // Reads still work and show the account unchanged.
  const after = await req(t.app, tok, { url: '/api/v1/mailboxes/INBOX/messages' });
  expect(after.statusCode).toBe(200);
  expect(after.json()).toEqual(before.json());
  const boxes = await req(t.app, tok, { url: '/api/v1/mailboxes' });
  expect(
    boxes
      .json()
      .mailboxes.map((b) => b.name)
      .sort(),
  ).toEqual(['Archive', 'INBOX']);
});

test('after the cutover (route store) the same writes work', async () => {
  await t.db.store.setRoute('mia', 'store');
  const r = await post('/api/v1/mailboxes/INBOX/flags', { uids: [1], add: ['\\Seen'] });
  expect(r.statusCode).toBe(200);
  expect(r.json().matched).toBe(1);
});
