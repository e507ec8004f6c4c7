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
  // The embedded server's unix socket is gone while it is down (store embedded-pg.js url):
  // connecting then fails with ENOENT, where TCP says ECONNREFUSED. Only a connect's: a file
  // a route misses is not the database.
  if (code === 'ENOENT' && err.syscall === 'connect') return true;
  return /Connection terminated|connection error|not queryable|timeout exceeded when trying to connect|Client was closed/i.test(
    String(err.message || ''),
  );
}

// The store wraps the parser's QueryError in core's INVALID_QUERY, whose template adds the
// same prefix again.
function queryMessage(err) {
  return String(err.message).replace(/^(Invalid query: )+/, 'Invalid query: ');
}

const SYMBOL = { '<=': '≤', '>=': '≥', '<': '<', '>': '>' };

/**
 * One Ajv error as a sentence naming the field: `limit must be ≤ 1000`.
 * @param {string} context 'querystring', 'params', 'body' or 'headers'
 * @param {object} v Ajv error object
 * @returns {string}
 */
function validationMessage(context, v) {
  const path = (v.instancePath || '').split('/').filter(Boolean);
  const p = v.params || {};
  if (p.missingProperty) path.push(p.missingProperty);
  const inUrl = context === 'querystring' || context === 'params';
  const field = inUrl ? path.join('.') || context : ['body', ...path].join('.');
  switch (v.keyword) {
    case 'required':
      return `${field} is required`;
    case 'additionalProperties':
      return inUrl
        ? `unknown parameter ${String(p.additionalProperty).slice(0, 64)}`
        : `${field} has an unknown property ${String(p.additionalProperty).slice(0, 64)}`;
    case 'maximum':
    case 'minimum':
    case 'exclusiveMaximum':
    case 'exclusiveMinimum':
      return `${field} must be ${SYMBOL[p.comparison] || p.comparison} ${p.limit}`;
    case 'type':
      return `${field} must be ${/integer|number/.test(p.type) ? 'a decimal integer' : `of type ${p.type}`}`;
    case 'enum':
      return `${field} must be one of: ${(p.allowedValues || []).join(', ')}`;
    case 'maxLength':
      return `${field} must be at most ${p.limit} characters`;
    case 'minLength':
      return p.limit === 1
        ? `${field} must not be empty`
        : `${field} must be at least ${p.limit} characters`;
    case 'maxItems':
      return `${field} must have at most ${p.limit} items`;
    case 'minItems':
      return `${field} must have at least ${p.limit} items`;
    case 'pattern':
      return `${field} has an invalid format`;
    case 'oneOf':
      return `${field} must match exactly one of its forms`;
    default:
      return `${field} ${v.message || 'is invalid'}`;
  }
}

// Fastify's and its plugins' own client errors (e.g. @fastify/static's 403 for a path that
// leaves its root) carry a status but no catalogue code: answered with the code of the
// status and a fixed message, since their text may name files.
const BY_STATUS = {
  400: ['INVALID_INPUT', 'Invalid request'],
  403: ['FORBIDDEN', 'Forbidden'],
  404: ['NOT_FOUND', 'Not found'],
  405: ['NOT_FOUND', 'Method not allowed'],
  406: ['INVALID_INPUT', 'Not acceptable'],
  408: ['REQUEST_TIMEOUT', 'The request was not received in time'],
  411: ['INVALID_INPUT', 'Length required'],
  413: ['PAYLOAD_TOO_LARGE', 'Body too large'],
  414: ['HEADERS_TOO_LARGE', 'URL too long'],
  415: ['UNSUPPORTED_MEDIA_TYPE', 'Unsupported media type'],
  416: ['INVALID_INPUT', 'Range not satisfiable'],
  431: ['HEADERS_TOO_LARGE', 'Request header fields (or the URL) too large'],
};

/**
 * Maps any error to the HTTP status and the public `{code, message}`.
 * @param {any} err
 * @returns {{status: number, code: string, message: string, internal: boolean}}
 */
function toPublic(err) {
  if (err && err.validation) {
    const context = err.validationContext || 'request';
    const inUrl = context === 'querystring' || context === 'params';
    return {
      status: 400,
      code: inUrl ? 'INVALID_PARAMETER' : 'INVALID_INPUT',
      message: validationMessage(context, err.validation[0] || {}),
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
  const status = err && Number(err.statusCode || err.status);
  if (BY_STATUS[status]) {
    const [mapped, message] = BY_STATUS[status];
    return { status, code: mapped, message, internal: false };
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

module.exports = { errors, isDbDown, toPublic, BY_STATUS };
