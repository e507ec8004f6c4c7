'use strict';

const {
  checkPassword,
  hashPassword,
  verifyPassword,
  PASSWORD_MIN_LENGTH,
  PASSWORD_MAX_LENGTH,
} = require('../lib');

// The one password rule: `mailgate user add|passwd` and POST /users all call checkPassword, so
// they refuse the same passwords with the same coded error.
describe('checkPassword', () => {
  const codeOf = (pw) => {
    try {
      checkPassword(pw);
      return null;
    } catch (err) {
      return [err.code, err.statusCode, err.message];
    }
  };

  test('8 to 1024 characters, counted as characters, not bytes', () => {
    expect(PASSWORD_MIN_LENGTH).toBe(8);
    expect(PASSWORD_MAX_LENGTH).toBe(1024);
    expect(codeOf('short')).toEqual([
      'INVALID_PASSWORD',
      400,
      'Password not accepted: it must be at least 8 characters',
    ]);
    expect(codeOf('1234567')).not.toBeNull();
    expect(codeOf('12345678')).toBeNull();
    expect(checkPassword('correct horse')).toBe('correct horse');
    // Seven emoji are 14 UTF-16 units and 28 bytes, but seven characters.
    expect(codeOf('😀'.repeat(7))).not.toBeNull();
    expect(codeOf('😀'.repeat(8))).toBeNull();
    expect(codeOf('x'.repeat(1024))).toBeNull();
    expect(codeOf('x'.repeat(1025))[2]).toBe(
      'Password not accepted: it must be at most 1024 characters',
    );
    expect(codeOf(undefined)[0]).toBe('INVALID_PASSWORD');
    expect(codeOf(12345678)[0]).toBe('INVALID_PASSWORD');
  });

  test('the message never contains the password', () => {
    expect(codeOf('hunter2')[2]).not.toContain('hunter2');
  });

  test('a checked password hashes and verifies', async () => {
    const h = await hashPassword(checkPassword('long enough'));
    await expect(verifyPassword('long enough', h)).resolves.toBe(true);
    await expect(verifyPassword('long enougH', h)).resolves.toBe(false);
  });
});

// The KDF's parameters come from the environment, within bounds (issue 28, login cost).
describe('scrypt parameters', () => {
  const { scryptParams, loadConfig } = require('../lib');
  const codeOf = (fn) => {
    try {
      fn();
      return null;
    } catch (err) {
      return err.code;
    }
  };

  test('defaults: N=16384, r=8, p=1, and a hash records what it used', async () => {
    expect(scryptParams({})).toEqual({ n: 16384, r: 8, p: 1 });
    const h = await hashPassword('long enough', scryptParams({}));
    expect(h).toMatch(/^scrypt\$16384\$8\$1\$/);
  });

  test('MAILGATE_SCRYPT_N/R/P set the cost of new hashes; old hashes still verify', async () => {
    const old = await hashPassword('long enough', scryptParams({}));
    const p = scryptParams({
      MAILGATE_SCRYPT_N: '32768',
      MAILGATE_SCRYPT_R: '8',
      MAILGATE_SCRYPT_P: '2',
    });
    expect(p).toEqual({ n: 32768, r: 8, p: 2 });
    const h = await hashPassword('long enough', p);
    expect(h).toMatch(/^scrypt\$32768\$8\$2\$/);
    await expect(verifyPassword('long enough', h)).resolves.toBe(true);
    await expect(verifyPassword('long enough', old)).resolves.toBe(true);
    expect(loadConfig({ MAILGATE_SCRYPT_N: '65536' }).scrypt).toEqual({ n: 65536, r: 8, p: 1 });
  });

  test('out of bounds is CONFIG_INVALID: weaker than the default, not a power of two, too costly', () => {
    for (const env of [
      { MAILGATE_SCRYPT_N: '8192' },
      { MAILGATE_SCRYPT_N: '20000' },
      { MAILGATE_SCRYPT_N: '2097152' },
      { MAILGATE_SCRYPT_R: '4' },
      { MAILGATE_SCRYPT_P: '0' },
      { MAILGATE_SCRYPT_P: 'x' },
      // 128 · 2^20 · 8 = 1 GiB
      { MAILGATE_SCRYPT_N: '1048576', MAILGATE_SCRYPT_R: '8' },
    ]) {
      expect([env, codeOf(() => scryptParams(env))]).toEqual([env, 'CONFIG_INVALID']);
      expect([env, codeOf(() => loadConfig(env))]).toEqual([env, 'CONFIG_INVALID']);
    }
  });

  test('a stored hash with parameters out of bounds is refused without being computed', async () => {
    const good = await hashPassword('long enough', scryptParams({}));
    const parts = good.split('$');
    for (const [n, r, p] of [
      [2 ** 30, 8, 1],
      [16384, 1024, 1],
      [16384, 8, 1000],
      [12345, 8, 1],
    ]) {
      const bogus = ['scrypt', n, r, p, parts[4], parts[5]].join('$');
      await expect(verifyPassword('long enough', bogus)).resolves.toBe(false);
    }
  });
});
