'use strict';

const { useApi, req } = require('./helpers');

/*
 * Accounts over HTTP (issue 30.7, 29.7, 29.6): a user without a password is told the one step
 * to take; a password change revokes the user's tokens; a sign-in link is traded once and a
 * session token cannot be traded for a new one (no renewal forever); a mailbox name with a
 * `.`/`..` segment or a control character is refused with INVALID_MAILBOX_NAME.
 */

const t = useApi();
let alice;
beforeAll(async () => {
  [alice] = await t.users('alice');
  await t.db.store.createUser('imported'); // as an import makes them: no password
});

const call = (method, url, payload, tok = alice) =>
  req(t.app, tok, { method, url: `/api/v1${url}`, payload });
const errorOf = (r) => [r.statusCode, r.json().error.code];

test('a user without a password: NO_PASSWORD naming the command; others stay generic', async () => {
  const r = await call('POST', '/session', { user: 'imported', password: 'anything at all' }, null);
  expect(errorOf(r)).toEqual([401, 'NO_PASSWORD']);
  expect(r.json().error.message).toBe(
    'user has no password: set one with mailgate user passwd imported',
  );
  const unknown = await call('POST', '/session', { user: 'nobody', password: 'x'.repeat(9) }, null);
  expect(errorOf(unknown)).toEqual([401, 'INVALID_CREDENTIALS']);
  const wrong = await call('POST', '/session', { user: 'alice', password: 'x'.repeat(9) }, null);
  expect(errorOf(wrong)).toEqual([401, 'INVALID_CREDENTIALS']);
});

test('a password change revokes every token of the user', async () => {
  const login = await call(
    'POST',
    '/session',
    { user: 'alice', password: 'correct horse battery' },
    null,
  );
  const session = login.json().token;
  expect((await call('GET', '/mailboxes', undefined, session)).statusCode).toBe(200);
  await t.app.mailService.users.setPassword('alice', 'another good password');
  expect(errorOf(await call('GET', '/mailboxes', undefined, session))).toEqual([
    401,
    'UNAUTHORIZED',
  ]);
  expect(errorOf(await call('GET', '/mailboxes', undefined, alice))).toEqual([401, 'UNAUTHORIZED']);
});

test('sign-in links: one-time, and a session token cannot renew itself through them', async () => {
  const users = t.app.mailService.users;
  const link = (await users.createToken('alice', { ttlSeconds: 900, label: 'link' })).token;
  const r = await call('POST', '/session/link', { link }, null);
  expect(r.statusCode).toBe(201);
  const session = r.json().token;
  expect((await call('GET', '/mailboxes', undefined, session)).statusCode).toBe(200);
  expect(errorOf(await call('POST', '/session/link', { link }, null))).toEqual([
    401,
    'UNAUTHORIZED',
  ]);
  // the session token of the link, or any other token, is not a link
  const other = (await users.createToken('alice', { label: 'cli' })).token;
  for (const tok of [session, other]) {
    expect(errorOf(await call('POST', '/session/link', { link: tok }, null))).toEqual([
      401,
      'UNAUTHORIZED',
    ]);
    // and it still works: a refused trade does not spend it
    expect((await call('GET', '/mailboxes', undefined, tok)).statusCode).toBe(200);
  }
});

test('mailbox names with "." or ".." segments or control characters: INVALID_MAILBOX_NAME', async () => {
  const tok = (await t.app.mailService.users.createToken('alice')).token;
  for (const name of ['..', '../bob', 'x/../../y', '.', 'a/./b', 'bell\u0007', 'del\u007f']) {
    const r = await call('POST', '/mailboxes', { name }, tok);
    expect({ name, e: errorOf(r) }).toEqual({ name, e: [400, 'INVALID_MAILBOX_NAME'] });
  }
  expect((await call('POST', '/mailboxes', { name: 'Fine/Name..ok' }, tok)).statusCode).toBe(201);
  const ren = await call('PATCH', '/mailboxes/Fine%2FName..ok', { name: '../../etc' }, tok);
  expect(errorOf(ren)).toEqual([400, 'INVALID_MAILBOX_NAME']);
  const names = (await call('GET', '/mailboxes', undefined, tok))
    .json()
    .mailboxes.map((b) => b.name);
  expect(names).toEqual(expect.arrayContaining(['Fine/Name..ok']));
  expect(names.some((n) => n.includes('etc') || n.startsWith('.'))).toBe(false);
});
