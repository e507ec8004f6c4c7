'use strict';

/*
 * backend=mbox|maildir on the API's header scan, search, flags and expunge routes: the same
 * response shapes as pg, Server-Timing present, per-user configuration enforced.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { addLegacyUser } = require('..');
const { msg, legacyMailOf } = require('@mailgate/test-support/mail');

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-legacy-api-'));
process.env.MAILGATE_HOME = home;
const { useApi, req } = require('../../api/test/helpers');

const messages = ['alpha okapi', 'beta', 'gamma okapi'].map((subject, i) =>
  msg({ subject, body: `body ${subject}\n`, date: `Tue, 0${i + 1} Mar 2002 10:00:00 +0000` }),
);

const t = useApi();
let alice;
let bob;
beforeAll(async () => {
  [alice, bob] = await t.users('alice', 'bob');
  await t.mail('alice', 'INBOX', messages);
  addLegacyUser(home, 'alice', legacyMailOf(home, messages));
});
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

const get = (token, url) => req(t.app, token, { url });
const post = (token, url, payload) => req(t.app, token, { method: 'POST', url, payload });

test.each(['mbox', 'maildir'])('header scan with backend=%s matches pg', async (b) => {
  const pg = await get(alice, '/api/v1/mailboxes/INBOX/messages?order=uid');
  const r = await get(alice, `/api/v1/mailboxes/INBOX/messages?backend=${b}&limit=2&order=uid`);
  expect(r.statusCode).toBe(200);
  expect(r.headers['server-timing']).toMatch(/dur=/);
  const strip = (x) => ({
    uid: x.uid,
    subject: x.subject,
    from: x.from,
    date: x.date,
    size: x.size,
  });
  expect(r.json().messages.map(strip)).toEqual(pg.json().messages.slice(0, 2).map(strip));
  const next = await get(
    alice,
    `/api/v1/mailboxes/INBOX/messages?backend=${b}&limit=2&order=uid&cursor=${r.json().nextCursor}`,
  );
  expect(next.json().messages.map((x) => x.subject)).toEqual(['gamma okapi']);
  const nd = await req(t.app, alice, {
    url: `/api/v1/mailboxes/INBOX/messages?backend=${b}`,
    headers: { accept: 'application/x-ndjson' },
  });
  expect(nd.statusCode).toBe(200);
  expect(nd.body.trim().split('\n')).toHaveLength(3);
});

test.each(['mbox', 'maildir'])('search, flags and expunge with backend=%s', async (b) => {
  const s = await get(alice, `/api/v1/search?q=text:okapi&backend=${b}&order=uid`);
  expect(s.statusCode).toBe(200);
  expect(s.headers['server-timing']).toMatch(/dur=/);
  expect(s.json()).toMatchObject({ total: 2, mailboxes: [{ mailbox: 'INBOX', uids: [1, 3] }] });
  expect(s.json().messages.map((m) => m.subject)).toEqual(['alpha okapi', 'gamma okapi']);
  const f = await post(alice, `/api/v1/mailboxes/INBOX/flags?backend=${b}`, {
    q: 'subject:beta',
    add: ['\\Deleted', '$Later'],
  });
  expect(f.statusCode).toBe(200);
  expect(f.json()).toMatchObject({
    matched: 1,
    changed: [{ uid: 2, flags: ['\\Deleted'], keywords: ['$Later'] }],
  });
  const e = await post(alice, `/api/v1/mailboxes/INBOX/expunge?backend=${b}`, {});
  expect(e.statusCode).toBe(200);
  expect(e.json().expunged).toEqual([2]);
  const after = await get(alice, `/api/v1/mailboxes/INBOX/messages?backend=${b}&order=uid`);
  expect(after.json().messages.map((m) => m.subject)).toEqual(['alpha okapi', 'gamma okapi']);
});

test('a user without legacy storage gets 400 LEGACY_NOT_CONFIGURED', async () => {
  for (const b of ['mbox', 'maildir', 'imap']) {
    const r = await get(bob, `/api/v1/search?q=x&backend=${b}`);
    expect(r.statusCode).toBe(400);
    expect(r.json().error.code).toBe('LEGACY_NOT_CONFIGURED');
  }
  const r = await get(alice, '/api/v1/mailboxes/Nope/messages?backend=mbox');
  expect(r.statusCode).toBe(404);
});
