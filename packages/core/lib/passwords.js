'use strict';

const crypto = require('node:crypto');
const { errors } = require('./errors');

/*
 * Passwords: the one rule for a password a person sets (checkPassword: `mailgate user add`,
 * `mailgate user passwd`, the API's POST /users), and hashing with scrypt (RFC 7914) and a
 * random 16-byte salt. Parameters are stored with the hash (`scrypt$N$r$p$salt$key`) so they
 * can be raised later without breaking old hashes: a hash keeps its parameters until the
 * password is set again.
 *
 * The parameters of new hashes come from the environment (MAILGATE_SCRYPT_N, _R, _P; README
 * "Configuration" gives each one's cost), within bounds: never weaker than scrypt's
 * interactive-login setting (N = 2^14, r = 8: 16 MiB per hash), never more than 256 MiB or
 * 2^24 block mixes per hash, so neither a typo nor a stored hash can make one login cost
 * gigabytes or minutes. Every login pays this cost once (IMAP LOGIN, POST /session), on the
 * libuv thread pool.
 */

// Lengths in characters (code points, as JSON Schema counts them). The upper bound keeps
// one scrypt call's input, and so a login's cost, bounded.
const PASSWORD_MIN_LENGTH = 8;
const PASSWORD_MAX_LENGTH = 1024;

const KEYLEN = 32;

// Defaults and bounds of the scrypt parameters (RFC 7914 2: memory is 128·N·r bytes, CPU is
// proportional to N·r·p).
const SCRYPT_DEFAULTS = Object.freeze({ n: 16384, r: 8, p: 1 });
const SCRYPT_MIN = Object.freeze({ n: 16384, r: 8, p: 1 });
const SCRYPT_MAX = Object.freeze({ n: 1048576, r: 32, p: 16 });
const SCRYPT_MAX_BYTES = 256 * 1024 * 1024;
const SCRYPT_MAX_WORK = 2 ** 24; // N·r·p

/** Whether N, r, p are integers within the hard bounds (memory, work, N a power of two). */
function withinBounds(n, r, p) {
  return (
    Number.isInteger(n) &&
    Number.isInteger(r) &&
    Number.isInteger(p) &&
    n >= 2 &&
    (n & (n - 1)) === 0 &&
    n <= SCRYPT_MAX.n &&
    r >= 1 &&
    r <= SCRYPT_MAX.r &&
    p >= 1 &&
    p <= SCRYPT_MAX.p &&
    128 * n * r <= SCRYPT_MAX_BYTES &&
    n * r * p <= SCRYPT_MAX_WORK
  );
}

/**
 * The scrypt parameters new hashes use, from MAILGATE_SCRYPT_N (a power of two, 16384 to
 * 1048576), MAILGATE_SCRYPT_R (8 to 32) and MAILGATE_SCRYPT_P (1 to 16); at most 256 MiB
 * (128·N·r) and 2^24 N·r·p. CONFIG_INVALID names what is wrong.
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {{n: number, r: number, p: number}}
 */
function scryptParams(env = process.env) {
  const problems = [];
  const read = (name, key) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return SCRYPT_DEFAULTS[key];
    const v = Number(raw);
    if (!Number.isInteger(v) || v < SCRYPT_MIN[key] || v > SCRYPT_MAX[key]) {
      problems.push(
        `${name} must be an integer between ${SCRYPT_MIN[key]} and ${SCRYPT_MAX[key]} (got "${raw}")`,
      );
      return SCRYPT_DEFAULTS[key];
    }
    return v;
  };
  const n = read('MAILGATE_SCRYPT_N', 'n');
  const r = read('MAILGATE_SCRYPT_R', 'r');
  const p = read('MAILGATE_SCRYPT_P', 'p');
  if ((n & (n - 1)) !== 0) problems.push(`MAILGATE_SCRYPT_N must be a power of two (got ${n})`);
  if (!problems.length && !withinBounds(n, r, p)) {
    problems.push(
      `MAILGATE_SCRYPT_N/R/P: 128·N·r must be at most ${SCRYPT_MAX_BYTES} bytes and N·r·p at most ${SCRYPT_MAX_WORK}`,
    );
  }
  if (problems.length) throw new errors.CONFIG_INVALID(problems.join('; '));
  return { n, r, p };
}

// The process's parameters, read from the environment at the first hash (config is
// environment only, read once).
let processParams = null;

function scrypt(password, salt, n, r, p) {
  return new Promise((resolve, reject) =>
    crypto.scrypt(
      password,
      salt,
      KEYLEN,
      // Room for exactly this hash's memory (128·N·r) and a little: within the bounds above.
      { N: n, r, p, maxmem: 128 * n * r + 1024 * 1024 },
      (err, key) => (err ? reject(err) : resolve(key)),
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
 * @param {{n: number, r: number, p: number}} [params] default: scryptParams() of the process
 * @returns {Promise<string>} encoded hash
 */
async function hashPassword(password, params) {
  const { n, r, p } = params || (processParams ??= scryptParams());
  const salt = crypto.randomBytes(16);
  const key = await scrypt(password, salt, n, r, p);
  return `scrypt$${n}$${r}$${p}$${salt.toString('base64')}$${key.toString('base64')}`;
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
  // A hash whose parameters are out of bounds (corrupt, or written by hand) is never computed:
  // one login could otherwise cost gigabytes or minutes.
  if (!withinBounds(n, r, p)) return false;
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
  scryptParams,
  SCRYPT_DEFAULTS,
};
