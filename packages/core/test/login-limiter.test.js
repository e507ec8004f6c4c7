'use strict';

const { LoginLimiter } = require('@mailgate/core');

function clock(start = 1_000_000) {
  const c = { t: start, now: () => c.t };
  return c;
}

const fail = (l, user, addr) => {
  const a = l.attempt(user, addr);
  if (a.allowed) a.failed();
  return a;
};

describe('LoginLimiter', () => {
  test('check and count are one step: parallel attempts beyond the limit are refused at once', () => {
    const l = new LoginLimiter({ userAddressMax: 10 });
    // 50 attempts started before any verification finished (none settled yet).
    const started = Array.from({ length: 50 }, () => l.attempt('alice', '10.0.0.1'));
    expect(started.filter((a) => a.allowed)).toHaveLength(10);
    const refused = started.filter((a) => !a.allowed);
    expect(refused).toHaveLength(40);
    expect(refused[0].retryAfter).toBeGreaterThan(0);
    expect(refused[0].retryAfter).toBeLessThanOrEqual(15 * 60);
  });

  test('strict per user + address: another user behind the same address is not locked out', () => {
    const l = new LoginLimiter({ userAddressMax: 3, addressMax: 100 });
    for (let i = 0; i < 3; i++) expect(fail(l, 'alice', '192.0.2.7').allowed).toBe(true);
    expect(l.attempt('alice', '192.0.2.7').allowed).toBe(false);
    const bob = l.attempt('bob', '192.0.2.7');
    expect(bob.allowed).toBe(true);
    bob.succeeded();
    // Alice from another address is still allowed (the strict key includes the address).
    expect(l.attempt('alice', '198.51.100.1').allowed).toBe(true);
  });

  test('loose per address: one address cannot sweep many users', () => {
    const l = new LoginLimiter({ userAddressMax: 3, addressMax: 5 });
    const users = ['u1', 'u2', 'u3', 'u4', 'u5'];
    for (const u of users) expect(fail(l, u, '203.0.113.9').allowed).toBe(true);
    expect(l.attempt('u6', '203.0.113.9').allowed).toBe(false);
    expect(l.attempt('u6', '203.0.113.10').allowed).toBe(true);
  });

  test('success resets the user counter and does not count against the address', () => {
    const l = new LoginLimiter({ userAddressMax: 3, addressMax: 3 });
    fail(l, 'alice', 'a');
    fail(l, 'alice', 'a');
    l.attempt('alice', 'a').succeeded();
    // Counter reset: three more failures allowed before the lock.
    for (let i = 0; i < 3; i++) {
      const a = l.attempt('alice', 'a');
      expect(a.allowed).toBe(i < 1); // the address allows 3 failures in all: 2 spent before
      if (a.allowed) a.failed();
    }
  });

  test('cancel refunds an attempt that got no answer (e.g. database down)', () => {
    const l = new LoginLimiter({ userAddressMax: 1 });
    l.attempt('alice', 'a').cancel();
    expect(l.attempt('alice', 'a').allowed).toBe(true);
  });

  test('the window ends: attempts are allowed again', () => {
    const c = clock();
    const l = new LoginLimiter({ userAddressMax: 2, windowMs: 60000, now: c.now });
    fail(l, 'alice', 'a');
    fail(l, 'alice', 'a');
    const r = l.attempt('alice', 'a');
    expect(r).toEqual({ allowed: false, retryAfter: 60 });
    c.t += 60000;
    expect(l.attempt('alice', 'a').allowed).toBe(true);
  });

  test('per-account slow-down: addresses that failed wait spaced turns, refused when the wait is too long', () => {
    const c = clock();
    const l = new LoginLimiter({
      accountFree: 3,
      accountBaseMs: 1000,
      accountMaxDelayMs: 4000,
      maxWaitMs: 6000,
      now: c.now,
    });
    const guessers = ['10.0.0.1', '10.0.0.2', '10.0.0.3'];
    for (const g of guessers) expect(fail(l, 'alice', g).delayMs).toBe(0);
    // The guessing addresses' further attempts wait their turn: 0, then 1 s, then +2 s …
    const delays = [];
    for (let i = 0; i < 5; i++) {
      const a = fail(l, 'alice', guessers[i % 3]);
      delays.push(a.allowed ? a.delayMs : `refused ${a.retryAfter}`);
    }
    expect(delays).toEqual([0, 1000, 3000, 'refused 7', 'refused 7']);
    // Another account is not slowed.
    expect(l.attempt('bob', '10.1.0.99').delayMs).toBe(0);
    // The real user's success clears the account's slow-down.
    c.t += 10000;
    l.attempt('alice', '10.0.0.1').succeeded();
    expect(l.attempt('alice', '10.0.0.2').delayMs).toBe(0);
  });

  test('issue 29.7: an address without failures is never slowed or refused by guessing elsewhere', () => {
    const c = clock();
    const l = new LoginLimiter({ now: c.now });
    // 28 wrong passwords from three addresses (the attack), then more queued.
    for (let i = 0; i < 40; i++) fail(l, 'alice', `10.0.0.${i % 3}`);
    expect(l.attempt('alice', '10.0.0.1').allowed).toBe(false);
    const real = l.attempt('alice', '198.51.100.20');
    expect(real).toMatchObject({ allowed: true, delayMs: 0 });
    real.succeeded();
  });

  test('issue 35.4: 20 simultaneous correct logins from one address all get through', async () => {
    const l = new LoginLimiter({ userAddressMax: 10 });
    const verify = () => new Promise((r) => setImmediate(() => r(true)));
    const login = async () => {
      const a = await l.admit('alice', '192.0.2.1');
      if (!a.allowed) return 'refused';
      const ok = await verify();
      if (ok) a.succeeded();
      else a.failed();
      return 'ok';
    };
    const answers = await Promise.all(Array.from({ length: 20 }, login));
    expect(answers).toEqual(Array(20).fill('ok'));
  });

  test('admit: guesses in flight make later attempts wait, then settled failures refuse them', async () => {
    const l = new LoginLimiter({ userAddressMax: 10 });
    const verify = () => new Promise((r) => setImmediate(() => r(false)));
    const guess = async () => {
      const a = await l.admit('alice', '192.0.2.1');
      if (!a.allowed) return 'refused';
      if (await verify()) a.succeeded();
      else a.failed();
      return 'checked';
    };
    const answers = await Promise.all(Array.from({ length: 50 }, guess));
    expect(answers.filter((x) => x === 'checked')).toHaveLength(10);
    expect(answers.filter((x) => x === 'refused')).toHaveLength(40);
  });

  test('issue 29.8: user names are case-sensitive, so ALICE never resets alice', () => {
    const l = new LoginLimiter({ userAddressMax: 3 });
    for (let i = 0; i < 3; i++) fail(l, 'alice', 'a');
    expect(l.attempt('alice', 'a').allowed).toBe(false);
    l.attempt('ALICE', 'a').succeeded();
    expect(l.attempt('alice', 'a').allowed).toBe(false);
  });

  test('memory is bounded by maxKeys', () => {
    const l = new LoginLimiter({ maxKeys: 100 });
    for (let i = 0; i < 1000; i++) fail(l, `u${i}`, `a${i}`);
    expect(l.userAddress.map.size).toBeLessThanOrEqual(100);
    expect(l.address.map.size).toBeLessThanOrEqual(100);
    expect(l.account.map.size).toBeLessThanOrEqual(100);
  });
});
