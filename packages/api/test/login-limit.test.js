'use strict';

const { useApi, req } = require('./helpers');

// Issue 17 item 1 (the check and the count were not atomic) and issue 15 item 4 (one user's
// failures behind a shared address locked out another user).
const t = useApi({ loginLimit: { userAddressMax: 10, addressMax: 100 } });
beforeAll(async () => {
  await t.user('alice', 'alice right password');
  await t.user('bob', 'bob right password');
  await t.user('carol', 'carol right password');
});

const login = (user, password, ip = '192.0.2.10') =>
  req(t.app, null, {
    method: 'POST',
    url: '/api/v1/session',
    payload: { user, password },
    remoteAddress: ip,
  });

test('50 parallel logins from one address: at most 10 are checked, the excess answers 429', async () => {
  const tries = Array.from({ length: 50 }, (_, i) =>
    login('alice', i === 49 ? 'alice right password' : `guess ${i}`),
  );
  const answers = await Promise.all(tries);
  const statuses = answers.map((r) => r.statusCode);
  expect(statuses.filter((s) => s === 429)).toHaveLength(40);
  expect(statuses.filter((s) => s === 401)).toHaveLength(10);
  // The right password came after the limit: refused, no token handed out.
  expect(answers[49].statusCode).toBe(429);
  expect(answers[49].json().error.code).toBe('TOO_MANY_ATTEMPTS');
  expect(Number(answers[49].headers['retry-after'])).toBeGreaterThan(0);
  // Still locked for alice from that address, even with the right password.
  expect((await login('alice', 'alice right password')).statusCode).toBe(429);
});

test('one user failing behind a shared address does not lock out another user there', async () => {
  const nat = '198.51.100.77';
  for (let i = 0; i < 12; i++) await login('carol', `typo ${i}`, nat);
  expect((await login('carol', 'carol right password', nat)).statusCode).toBe(429);
  const bob = await login('bob', 'bob right password', nat);
  expect(bob.statusCode).toBe(201);
  expect(bob.json().token).toMatch(/^mg_/);
});

test('a success resets the user counter', async () => {
  const ip = '203.0.113.5';
  for (let i = 0; i < 9; i++) expect((await login('bob', 'nope', ip)).statusCode).toBe(401);
  expect((await login('bob', 'bob right password', ip)).statusCode).toBe(201);
  for (let i = 0; i < 10; i++) expect((await login('bob', 'nope', ip)).statusCode).toBe(401);
  expect((await login('bob', 'nope', ip)).statusCode).toBe(429);
});
