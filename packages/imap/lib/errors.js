'use strict';

/*
 * How a command fails on the wire. Handlers throw ImapError for protocol answers (tagged NO or
 * BAD with an optional response code, RFC 3501 7.1 / RFC 5530); coded @mailgate/core errors
 * from the service map to NO with a response code; anything else is a server bug, logged and
 * answered with a generic NO [SERVERBUG] so that internal text never reaches the client.
 */

const { isCoded } = require('@mailgate/core');
const { safeText } = require('./protocol/writer');

class ImapError extends Error {
  /**
   * @param {'NO'|'BAD'} status
   * @param {string} text
   * @param {string} [code] response code without brackets, e.g. `TRYCREATE`
   */
  constructor(status, text, code) {
    super(text);
    this.status = status;
    this.responseCode = code || null;
  }
}

const bad = (text, code) => new ImapError('BAD', text, code);
const no = (text, code) => new ImapError('NO', text, code);

// Coded service errors → response codes (RFC 5530).
const CODES = {
  MAILBOX_NOT_FOUND: 'NONEXISTENT',
  MESSAGE_NOT_FOUND: 'NONEXISTENT',
  MAILBOX_EXISTS: 'ALREADYEXISTS',
  INVALID_MAILBOX_NAME: 'CANNOT',
  INVALID_INPUT: 'CANNOT',
  INVALID_QUERY: 'CANNOT',
  UNSUPPORTED_OPERATION: 'CANNOT',
  PAYLOAD_TOO_LARGE: 'TOOBIG',
  FORBIDDEN: 'NOPERM',
  DB_UNAVAILABLE: 'UNAVAILABLE',
  BACKEND_TIMEOUT: 'UNAVAILABLE',
  MAILBOX_LOCKED: 'INUSE',
  UPSTREAM_IMAP_FAILED: 'UNAVAILABLE',
  UPSTREAM_TLS_REQUIRED: 'UNAVAILABLE',
  // RFC 5530: the operation may succeed later (after the migration's cutover).
  MAILBOX_MIGRATING: 'INUSE',
  // RFC 5530 LIMIT: the user's share of the server (service user-gate.js) or a per-command
  // cost limit.
  USER_BUSY: 'LIMIT',
  QUERY_TOO_COMPLEX: 'LIMIT',
};

/**
 * The tagged answer for an error thrown by a handler.
 * @param {unknown} err
 * @param {{error: Function}} log
 * @returns {{status: string, code: string|null, text: string}}
 */
function answerFor(err, log) {
  if (err instanceof ImapError) {
    return { status: err.status, code: err.responseCode, text: safeText(err.message) };
  }
  if (err && err.name === 'QueryError') {
    return { status: 'BAD', code: null, text: safeText(err.message) };
  }
  if (isCoded(err) && err.statusCode < 500) {
    return { status: 'NO', code: CODES[err.code] || null, text: safeText(err.message) };
  }
  if (isCoded(err)) {
    return { status: 'NO', code: CODES[err.code] || 'UNAVAILABLE', text: safeText(err.message) };
  }
  log.error({ err }, 'imap command failed');
  return { status: 'NO', code: 'SERVERBUG', text: 'Internal server error' };
}

module.exports = { ImapError, bad, no, answerFor };
