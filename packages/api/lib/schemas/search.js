'use strict';

const { errorsFor, headerProps, mailboxName, backend, security, MAX_LIMIT } = require('./common');

/** GET /search */
const search = {
  tags: ['mail'],
  summary: 'Search with the query language (README "Query language")',
  security,
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      q: { type: 'string', maxLength: 4096, default: '' },
      mailbox: mailboxName,
      limit: { type: 'integer', minimum: 0, maximum: MAX_LIMIT, default: 50 },
      backend,
    },
  },
  response: {
    200: {
      type: 'object',
      properties: {
        total: { type: 'integer' },
        mailboxes: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              mailbox: { type: 'string' },
              uids: { type: 'array', items: { type: 'integer' } },
            },
          },
        },
        messages: {
          type: 'array',
          items: { type: 'object', properties: { mailbox: { type: 'string' }, ...headerProps } },
        },
      },
    },
    ...errorsFor(400, 401, 404, 501, 503),
  },
};

module.exports = { search };
