'use strict';

const {
  errorsFor,
  headerProps,
  mailboxName,
  backendQuery,
  queryWithBackend,
  security,
  MAX_LIMIT,
} = require('./common');

/** GET /threads */
const list = {
  tags: ['mail'],
  summary: 'Threads (jwz: References/In-Reply-To, then base subject), newest activity first',
  description:
    'Thread ids are computed at import. `mailbox` keeps the threads with a message there ' +
    '(the counts still cover the whole thread). Pages follow `nextCursor`. pg and es only.',
  security,
  querystring: queryWithBackend({
    mailbox: mailboxName,
    limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: 50 },
    cursor: { type: 'string', minLength: 1, maxLength: 1024 },
  }),
  response: {
    200: {
      type: 'object',
      properties: {
        threads: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              threadId: { type: 'string' },
              subject: { type: ['string', 'null'], description: "the first message's subject" },
              messages: { type: 'integer' },
              unseen: { type: 'integer' },
              lastDate: { type: ['string', 'null'], format: 'date-time' },
              from: { type: 'array', items: { type: 'string' }, description: 'up to 5 senders' },
            },
          },
        },
        nextCursor: { type: ['string', 'null'] },
      },
    },
    ...errorsFor(400, 401, 404, 501, 503),
  },
};

/** GET /threads/{thread} */
const messages = {
  tags: ['mail'],
  summary: "A thread's messages, oldest first, each with its mailbox",
  security,
  params: {
    type: 'object',
    required: ['thread'],
    properties: {
      thread: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[0-9a-f/]+$' },
    },
  },
  querystring: backendQuery,
  response: {
    200: {
      type: 'object',
      properties: {
        threadId: { type: 'string' },
        messages: {
          type: 'array',
          items: { type: 'object', properties: { mailbox: { type: 'string' }, ...headerProps } },
        },
      },
    },
    ...errorsFor(400, 401, 404, 501, 503),
  },
};

module.exports = { list, messages };
