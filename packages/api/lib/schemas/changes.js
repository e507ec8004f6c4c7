'use strict';

const { errorsFor, mailboxParams, queryWithBackend, security, changedFlags } = require('./common');

/** GET /mailboxes/{mailbox}/changes */
const changes = {
  tags: ['mail'],
  summary: 'What changed after a modseq: flags, new and expunged messages (sync)',
  description:
    'Keeps a client cache in sync without re-reading the mailbox (RFC 7162 CONDSTORE/QRESYNC ' +
    'semantics). `changed` holds every message whose flags changed or that arrived (copy, ' +
    'move, append) after `since`; `expunged` the uids removed after it. Ask again with the ' +
    "answer's `highestModseq`.",
  security,
  params: mailboxParams,
  querystring: queryWithBackend(
    { since: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER } },
    ['since'],
  ),
  response: {
    200: {
      type: 'object',
      properties: {
        highestModseq: { type: 'integer' },
        changed: changedFlags,
        expunged: { type: 'array', items: { type: 'integer' } },
      },
    },
    ...errorsFor(400, 401, 404, 501, 503),
  },
};

module.exports = { changes };
