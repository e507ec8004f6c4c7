'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { setup, req } = require('./helpers');
const { inbox } = require('./fixtures');
const { mboxOf, msg } = require('@mailgate/test-support/mail');

// Issue 11: every route that reads mail honours `backend=` through the mail service (the
// message, raw and attachment routes used to ignore it and answer from pg), and a backend
// that is not there answers its code, never pg's answer.
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'mailgate-api-backends-'));
let t;
let token;
beforeAll(async () => {
  const mboxDir = path.join(home, 'mail');
  fs.mkdirSync(mboxDir);
  fs.writeFileSync(path.join(mboxDir, 'inbox.mbox'), mboxOf(inbox));
  fs.writeFileSync(
    path.join(home, 'legacy.json'),
    JSON.stringify({ users: { alice: { mboxDir } } }),
  );
  t = await setup({ home });
  token = await t.user('alice');
  await t.mail('alice', 'INBOX', inbox);
});
afterAll(async () => {
  await t.close();
  fs.rmSync(home, { recursive: true, force: true });
});

const get = (url) => req(t.app, token, { url });
const errorOf = (r) => [r.statusCode, r.json().error.code];

test('message view, raw and attachment answer from the mbox file with backend=mbox', async () => {
  const pg = (await get('/api/v1/mailboxes/INBOX/messages/2')).json();
  const mb = await get('/api/v1/mailboxes/INBOX/messages/2?backend=mbox');
  expect(mb.statusCode).toBe(200);
  const m = mb.json();
  expect(m).toMatchObject({ mailbox: 'INBOX', uid: 2, subject: 'Quarterly report' });
  expect(m.text).toBe(pg.text);
  expect(m.attachments).toEqual(pg.attachments);
  const raw = await get('/api/v1/mailboxes/INBOX/messages/5/raw?backend=mbox');
  expect(raw.statusCode).toBe(200);
  expect(raw.rawPayload.equals(inbox[4])).toBe(true);
  const a = await get('/api/v1/mailboxes/INBOX/messages/2/attachments/2?backend=mbox');
  expect(a.statusCode).toBe(200);
  expect(a.headers['content-type']).toBe('application/pdf');
  expect(a.rawPayload.equals(Buffer.alloc(1500, 'P'))).toBe(true);
});

test('the mbox file is what answers: a uid only pg has is not found there', async () => {
  await t.mail('alice', 'INBOX', [msg({ subject: 'pg only' })]); // uid 6; the file has 5
  expect((await get('/api/v1/mailboxes/INBOX/messages/6')).statusCode).toBe(200);
  for (const suffix of ['', '/raw']) {
    expect(errorOf(await get(`/api/v1/mailboxes/INBOX/messages/6${suffix}?backend=mbox`))).toEqual([
      404,
      'MESSAGE_NOT_FOUND',
    ]);
  }
});

test('a backend the user has not configured answers its code on every read route', async () => {
  for (const url of [
    '/api/v1/mailboxes?backend=maildir',
    '/api/v1/mailboxes/INBOX/messages?backend=maildir',
    '/api/v1/mailboxes/INBOX/messages/1?backend=maildir',
    '/api/v1/mailboxes/INBOX/messages/1/raw?backend=imap',
    '/api/v1/mailboxes/INBOX/messages/2/attachments/2?backend=maildir',
    '/api/v1/search?q=happy&backend=maildir',
  ]) {
    expect(errorOf(await get(url))).toEqual([400, 'LEGACY_NOT_CONFIGURED']);
  }
  expect(errorOf(await get('/api/v1/mailboxes/INBOX/messages/1?backend=es'))).toEqual([
    400,
    'ES_NOT_CONFIGURED',
  ]);
});

test('UNSUPPORTED_OPERATION keeps its code and status (501)', async () => {
  const be = await t.app.mailService.openBackend('mbox', 'alice');
  await expect(be.append('INBOX', inbox[0])).rejects.toMatchObject({
    code: 'UNSUPPORTED_OPERATION',
  });
  const { toPublic } = require('../lib/errors');
  const p = toPublic(await be.changesSince('INBOX', 0).catch((e) => e));
  expect(p).toMatchObject({ status: 501, code: 'UNSUPPORTED_OPERATION' });
  expect(p.message).toBe('Backend "mbox" does not support changesSince');
});
