'use strict';

/*
 * Schemas shared by every route plugin: the Address, HeaderRow and Error components
 * (registered once with addSchema and referenced by $id, so the OpenAPI document shows them
 * as components and responses are serialized by fast-json-stringify: only the listed
 * properties leave the server), the error responses of a route, and the parameter types
 * every resource uses. Route-specific schemas live beside this file, one per resource.
 */

const address = {
  $id: 'Address',
  type: 'object',
  properties: { name: { type: 'string' }, address: { type: 'string' } },
};

const headerProps = {
  uid: { type: 'integer' },
  from: { anyOf: [{ $ref: 'Address#' }, { type: 'null' }] },
  to: { type: 'array', items: { $ref: 'Address#' } },
  cc: { type: 'array', items: { $ref: 'Address#' } },
  subject: { type: ['string', 'null'] },
  date: { type: ['string', 'null'], format: 'date-time' },
  internalDate: { type: 'string', format: 'date-time' },
  size: { type: 'integer' },
  flags: { type: 'array', items: { type: 'string' } },
  keywords: { type: 'array', items: { type: 'string' } },
  hasAttachments: { type: 'boolean' },
  messageId: { type: ['string', 'null'] },
  modseq: { type: 'integer' },
  preview: {
    type: ['string', 'null'],
    description: 'the first words of the body, plain text (computed at import)',
  },
  threadId: {
    type: ['string', 'null'],
    description: 'thread (GET /threads/{threadId}); null: not threaded yet, a thread of its own',
  },
};

const headerRow = {
  $id: 'HeaderRow',
  type: 'object',
  properties: headerProps,
  required: ['uid', 'flags', 'size'],
};

const error = {
  $id: 'Error',
  type: 'object',
  properties: {
    error: {
      type: 'object',
      properties: { code: { type: 'string' }, message: { type: 'string' } },
      required: ['code', 'message'],
    },
  },
  required: ['error'],
};

const all = [address, headerRow, error];

const errorRef = { $ref: 'Error#' };
const errorText = {
  400: 'Invalid input (code says which)',
  401: 'Missing or invalid bearer token',
  403: 'Not allowed',
  404: 'Not found (also for other users’ mailboxes and messages)',
  409: 'Already exists',
  413: 'Body too large',
  422: 'The message cannot be shown (over the parse budget); fetch it raw',
  429: 'Too many failed logins, or too many open streams',
  501: 'Operation not supported by this backend',
  503: 'Database unavailable or timed out',
};

/**
 * Error responses of a route, as schema entries.
 * @param {...number} codes HTTP statuses
 * @returns {object} `{[status]: Error schema}`
 */
function errorsFor(...codes) {
  const out = {};
  for (const c of codes) out[c] = { ...errorRef, description: errorText[c] || 'Error' };
  return out;
}

// Mailbox names are free text (slashes encoded as %2F in the path); NUL and line breaks are
// refused here because PostgreSQL text cannot hold NUL.
const mailboxName = {
  type: 'string',
  minLength: 1,
  maxLength: 512,
  pattern: '^[^\\u0000\\r\\n]+$',
};
const uid = { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER };
const backend = {
  type: 'string',
  enum: ['pg', 'es', 'imap', 'mbox', 'maildir'],
  default: 'pg',
  description:
    'storage path: pg (default), es (search), mbox/maildir/imap (legacy paths, configured per user with `mailgate legacy add-user`)',
};
// System flags by their IMAP names, or keywords (IMAP atoms: no spaces, parentheses,
// wildcards, quotes or backslashes).
const flag = {
  type: 'string',
  pattern:
    '^(\\\\(Seen|Answered|Flagged|Deleted|Draft)|[^\\\\\\s(){}%*"\\]\\u0000-\\u001f\\u007f]{1,128})$',
};

const mailboxParams = {
  type: 'object',
  required: ['mailbox'],
  properties: { mailbox: mailboxName },
};
const messageParams = {
  type: 'object',
  required: ['mailbox', 'uid'],
  properties: { mailbox: mailboxName, uid },
};
/**
 * A route's querystring: these parameters and `backend` (every mail route can be asked of any
 * storage path), no others.
 * @param {object} [properties]
 * @param {string[]} [required]
 */
function queryWithBackend(properties = {}, required) {
  return {
    type: 'object',
    additionalProperties: false,
    ...(required ? { required } : {}),
    properties: { ...properties, backend },
  };
}
const backendQuery = queryWithBackend();
const tokenAnswer = {
  type: 'object',
  properties: { token: { type: 'string' }, expiresAt: { type: 'string' } },
};
// Bearer auth on a route, as OpenAPI sees it.
const security = [{ bearer: [] }];

/** Largest page a client may ask for (header scans and search rows). */
const MAX_LIMIT = 1000;

/** Messages whose flags changed: the answer of a flag change and of the changes feed. */
const changedFlags = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      uid: { type: 'integer' },
      flags: { type: 'array', items: { type: 'string' } },
      keywords: { type: 'array', items: { type: 'string' } },
      modseq: { type: 'integer' },
    },
  },
};

module.exports = {
  all,
  changedFlags,
  errorsFor,
  headerProps,
  mailboxName,
  uid,
  backend,
  flag,
  mailboxParams,
  messageParams,
  backendQuery,
  queryWithBackend,
  tokenAnswer,
  security,
  MAX_LIMIT,
};
