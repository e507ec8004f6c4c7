'use strict';

const createError = require('@fastify/error');

/*
 * The one catalogue of coded errors. The CLI prints `code: message`; the API (later) maps
 * statusCode straight to HTTP. Messages are written for users: they name the file, mailbox
 * or message and what is wrong, never internal state.
 */
const defs = {
  CONFIG_INVALID: ['Invalid configuration: %s', 500],
  USAGE: ['%s', 400],
  USER_NOT_FOUND: ['No such user: %s', 404],
  USER_EXISTS: ['User already exists: %s', 409],
  MAILBOX_NOT_FOUND: ['No such mailbox: %s', 404],
  SOURCE_NOT_FOUND: ['Cannot read source %s: %s', 400],
  INVALID_QUERY: ['Invalid query: %s', 400],
  DB_UNAVAILABLE: ['Database unavailable: %s', 503],
  EMBEDDED_PG_FAILED: ['Embedded PostgreSQL failed: %s', 500],
  VERIFY_FAILED: ['Verification failed: %s', 500],
};

const errors = {};
for (const [code, [message, statusCode]] of Object.entries(defs)) {
  errors[code] = createError(code, message, statusCode);
}

/**
 * True when err comes from the catalogue (so its message is safe to show to a user).
 * @param {unknown} err
 * @returns {boolean}
 */
function isCoded(err) {
  return Boolean(err && typeof err.code === 'string' && errors[err.code]);
}

module.exports = { errors, isCoded };
