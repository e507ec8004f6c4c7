'use strict';

const { errorsFor, security, backendQuery } = require('./common');

/** GET /mailboxes */
const listMailboxes = {
  tags: ['mail'],
  summary: 'Mailboxes with total and unseen counts',
  security,
  querystring: backendQuery,
  response: {
    200: {
      type: 'object',
      properties: {
        mailboxes: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              name: { type: 'string' },
              total: { type: 'integer' },
              unseen: { type: 'integer' },
              uidvalidity: { type: 'integer' },
              uidnext: { type: 'integer' },
              highestModseq: { type: 'integer' },
              specialUse: { type: ['string', 'null'] },
              subscribed: { type: ['boolean', 'null'] },
            },
          },
        },
      },
    },
    ...errorsFor(400, 401, 501, 503),
  },
};

module.exports = { listMailboxes };
