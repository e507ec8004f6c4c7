'use strict';

const { useApi, req } = require('./helpers');

// Issue 17 item 1 (the check and the count were not atomic) and issue 15 item 4 (one user's
// failures behind a shared address locked out another user).
// A short longest wait (3 s instead of 15 s): the per-account slow-down refuses sooner.
const t = useApi({ loginLimit: { userAddressMax: 10, addressMax: 100, maxWaitMs: 3000 } });
beforeAll(async () => {
  await t.user('alice', 'alice right password');
  await t.user('bob', 'bob right password');
  await t.user('carol', 'carol right password');
  await t.user('dave', 'dave right password');
  await t.user('erin', 'erin right password');
  await t.user('ERIN', 'ERIN right password');
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

test('issue 35.4: 20 simultaneous correct logins of one user from one address all succeed', async () => {
  const answers = await Promise.all(
    Array.from({ length: 20 }, () => login('dave', 'dave right password', '192.0.2.35')),
  );
  expect(answers.map((r) => r.statusCode)).toEqual(Array(20).fill(201));
});

test('issue 29.7: guessing from three addresses does not lock the real user out of a clean one', async () => {
  const guessers = ['203.0.113.101', '203.0.113.102', '203.0.113.103'];
  const guesses = [];
  for (let i = 0; i < 28; i++) guesses.push(login('dave', `guess ${i}`, guessers[i % 3]));
  const statuses = (await Promise.all(guesses)).map((r) => r.statusCode);
  expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
  const real = await login('dave', 'dave right password', '198.51.100.200');
  expect(real.statusCode).toBe(201);
});

test('issue 29.8: user names are case-sensitive in the limiter too: ALICE cannot reset alice', async () => {
  const ip = '192.0.2.88';
  for (let i = 0; i < 10; i++) expect((await login('erin', 'nope', ip)).statusCode).toBe(401);
  expect((await login('erin', 'erin right password', ip)).statusCode).toBe(429);
  // Another account whose name differs only in case logs in from the same address …
  expect((await login('ERIN', 'ERIN right password', ip)).statusCode).toBe(201);
  // … and erin stays locked there.
  expect((await login('erin', 'erin right password', ip)).statusCode).toBe(429);
});
