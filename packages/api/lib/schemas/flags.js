'use strict';

const {
  errorsFor,
  uid,
  flag,
  mailboxParams,
  backendQuery,
  security,
  changedFlags,
} = require('./common');

/** POST /mailboxes/{mailbox}/flags */
const setFlags = {
  tags: ['mail'],
  summary: 'Add and remove flags/keywords on messages chosen by uids or by a query',
  security,
  params: mailboxParams,
  body: {
    type: 'object',
    additionalProperties: false,
    properties: {
      uids: { type: 'array', items: uid, minItems: 1, maxItems: 10000 },
      q: { type: 'string', maxLength: 4096 },
      add: { type: 'array', items: flag, maxItems: 50, default: [] },
      remove: { type: 'array', items: flag, maxItems: 50, default: [] },
    },
    oneOf: [{ required: ['uids'] }, { required: ['q'] }],
  },
  querystring: backendQuery,
  response: {
    200: {
      type: 'object',
      properties: {
        matched: { type: 'integer' },
        changed: changedFlags,
        highestModseq: { type: 'integer' },
      },
    },
    ...errorsFor(400, 401, 404, 501, 503),
  },
};

/** POST /mailboxes/{mailbox}/expunge */
const expunge = {
  tags: ['mail'],
  summary: 'Expunge messages flagged \\Deleted (optionally only these uids)',
  description:
    'Two-phase: the messages disappear from every answer at once; their rows are ' +
    'purged in the background.',
  security,
  params: mailboxParams,
  body: {
    type: ['object', 'null'],
    additionalProperties: false,
    properties: { uids: { type: 'array', items: uid, minItems: 1, maxItems: 100000 } },
  },
  querystring: backendQuery,
  response: {
    200: {
      type: 'object',
      properties: {
        expunged: { type: 'array', items: { type: 'integer' } },
        highestModseq: { type: 'integer' },
      },
    },
    ...errorsFor(400, 401, 404, 501, 503),
  },
};

module.exports = { setFlags, expunge };
