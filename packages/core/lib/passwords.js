'use strict';

const crypto = require('node:crypto');
const { errors } = require('./errors');

/*
 * Passwords: the one rule for a password a person sets (checkPassword: `mailgate user add`,
 * `mailgate user passwd`, the API's POST /users), and hashing with scrypt (RFC 7914) and a
 * random 16-byte salt. Parameters are stored with the hash (`scrypt$N$r$p$salt$key`) so they
 * can be raised later without breaking old hashes.
 */

// Lengths in characters (code points, as JSON Schema counts them). The upper bound keeps
// one scrypt call's input, and so a login's cost, bounded.
const PASSWORD_MIN_LENGTH = 8;
const PASSWORD_MAX_LENGTH = 1024;

const N = 16384;
const R = 8;
const P = 1;
const KEYLEN = 32;

function scrypt(password, salt, n, r, p) {
  return new Promise((resolve, reject) =>
    crypto.scrypt(password, salt, KEYLEN, { N: n, r, p, maxmem: 64 * 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

/**
 * Checks a new password against the rule; INVALID_PASSWORD says what is wrong (never the
 * password itself).
 * @param {unknown} password
 * @returns {string} the password
 */
function checkPassword(password) {
  if (typeof password !== 'string') throw new errors.INVALID_PASSWORD('it must be a string');
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH)
    throw new errors.INVALID_PASSWORD(`it must be at least ${PASSWORD_MIN_LENGTH} characters`);
  if (length > PASSWORD_MAX_LENGTH)
    throw new errors.INVALID_PASSWORD(`it must be at most ${PASSWORD_MAX_LENGTH} characters`);
  return password;
}

/**
 * @param {string} password
 * @returns {Promise<string>} encoded hash
 */
async function hashPassword(password) {
  const salt = crypto.randomBytes(16);
  const key = await scrypt(password, salt, N, R, P);
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/**
 * Constant-time check of a password against an encoded hash; false for malformed hashes.
 * @param {string} password
 * @param {string|null} encoded
 * @returns {Promise<boolean>}
 */
async function verifyPassword(password, encoded) {
  if (typeof encoded !== 'string') return false;
  const parts = encoded.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [n, r, p] = parts.slice(1, 4).map(Number);
  const salt = Buffer.from(parts[4], 'base64');
  const expected = Buffer.from(parts[5], 'base64');
  const key = await scrypt(String(password), salt, n, r, p);
  return key.length === expected.length && crypto.timingSafeEqual(key, expected);
}

module.exports = {
  checkPassword,
  hashPassword,
  verifyPassword,
  PASSWORD_MIN_LENGTH,
  PASSWORD_MAX_LENGTH,
};
