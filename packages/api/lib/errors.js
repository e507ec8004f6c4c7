'use strict';

const { errors, isCoded } = require('@mailgate/core');

// The API's coded errors live in core's one catalogue (@mailgate/core errors.js).

// PostgreSQL SQLSTATEs and driver/pool conditions that mean "the database is not reachable
// right now": answered 503 so clients retry, and the pool reconnects by itself later.
const DB_DOWN_SYSCALL = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
]);
const DB_DOWN_SQLSTATE = new Set(['57P01', '57P02', '57P03', '53300', '53400']);

/**
 * @param {any} err
 * @returns {boolean} true when err says PostgreSQL is unreachable or restarting
 */
function isDbDown(err) {
  if (!err) return false;
  if (err.name === 'KnexTimeoutError') return true;
  const code = typeof err.code === 'string' ? err.code : '';
  if (DB_DOWN_SYSCALL.has(code) || DB_DOWN_SQLSTATE.has(code) || /^08/.test(code)) return true;
  return /Connection terminated|connection error|not queryable|timeout exceeded when trying to connect|Client was closed/i.test(
    String(err.message || ''),
  );
}

// The store wraps the parser's QueryError in core's INVALID_QUERY, whose template adds the
// same prefix again.
function queryMessage(err) {
  return String(err.message).replace(/^(Invalid query: )+/, 'Invalid query: ');
}

/**
 * Maps any error to the HTTP status and the public `{code, message}`.
 * @param {any} err
 * @returns {{status: number, code: string, message: string, internal: boolean}}
 */
function toPublic(err) {
  if (err && err.validation) {
    const v = err.validation[0] || {};
    const where = `${err.validationContext || 'request'}${v.instancePath || ''}`;
    const field = v.params && v.params.missingProperty ? `/${v.params.missingProperty}` : '';
    return {
      status: 400,
      code: 'INVALID_INPUT',
      message: `${where}${field} ${v.message || 'is invalid'}`.trim(),
      internal: false,
    };
  }
  if (err && err.code === 'INVALID_QUERY') {
    return { status: 400, code: 'INVALID_QUERY', message: queryMessage(err), internal: false };
  }
  if (isCoded(err)) {
    return { status: err.statusCode, code: err.code, message: err.message, internal: false };
  }
  if (isDbDown(err)) {
    return {
      status: 503,
      code: 'DB_UNAVAILABLE',
      message: 'Database unavailable, retry shortly',
      internal: false,
    };
  }
  const code = err && typeof err.code === 'string' ? err.code : '';
  if (code === '57014') {
    return {
      status: 503,
      code: 'BACKEND_TIMEOUT',
      message: 'The backend did not answer in time',
      internal: false,
    };
  }
  // Fastify's own client errors (bad JSON, wrong content type, body too large, bad URL):
  // their messages describe the request, never the server.
  if (code.startsWith('FST_') && err.statusCode >= 400 && err.statusCode < 500) {
    const mapped =
      code === 'FST_ERR_CTP_BODY_TOO_LARGE'
        ? 'PAYLOAD_TOO_LARGE'
        : code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
          ? 'UNSUPPORTED_MEDIA_TYPE'
          : 'INVALID_INPUT';
    return { status: err.statusCode, code: mapped, message: err.message, internal: false };
  }
  // Data errors PostgreSQL raised on a value the client sent (class 22): a validation gap,
  // answered as bad input without echoing the SQL error.
  if (/^22/.test(code)) {
    return {
      status: 400,
      code: 'INVALID_INPUT',
      message: 'Invalid value in request',
      internal: true,
    };
  }
  return { status: 500, code: 'INTERNAL', message: 'Internal server error', internal: true };
}

module.exports = { errors, isDbDown, toPublic };
