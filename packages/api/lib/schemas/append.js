'use strict';

const { errorsFor, flag, mailboxParams, queryWithBackend, security } = require('./common');

/** POST /mailboxes/{mailbox}/messages */
const append = {
  tags: ['mail'],
  summary: 'Append a raw message (a draft, a sent copy) with flags (IMAP APPEND)',
  description:
    'The body is the message itself (`Content-Type: message/rfc822`), stored byte for byte. ' +
    'Flags and keywords as repeated `flags` parameters (`?flags=%5CDraft&flags=%5CSeen`).',
  security,
  params: mailboxParams,
  querystring: queryWithBackend({
    flags: { type: 'array', items: flag, maxItems: 50, default: [] },
    internalDate: { type: 'string', format: 'date-time' },
  }),
  response: {
    201: {
      type: 'object',
      properties: { uid: { type: 'integer' }, uidvalidity: { type: 'integer' } },
    },
    ...errorsFor(400, 401, 404, 413, 501, 503),
  },
};

module.exports = { append };
