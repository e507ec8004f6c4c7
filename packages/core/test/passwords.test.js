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
