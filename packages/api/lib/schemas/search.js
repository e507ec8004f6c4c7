'use strict';

const {
  errorsFor,
  headerProps,
  mailboxName,
  queryWithBackend,
  security,
  MAX_LIMIT,
} = require('./common');

/** GET /search */
const search = {
  tags: ['mail'],
  summary: 'Search with the query language (README "Query language"), ordered and paged',
  security,
  querystring: queryWithBackend({
    q: { type: 'string', maxLength: 4096, default: '' },
    mailbox: mailboxName,
    limit: { type: 'integer', minimum: 0, maximum: MAX_LIMIT, default: 50 },
    order: {
      type: 'string',
      enum: [
        'date',
        '-date',
        'uid',
        '-uid',
        'from',
        '-from',
        'subject',
        '-subject',
        'size',
        '-size',
      ],
      default: '-date',
      description:
        'rows by date (the Date header, else the received date), uid, sender name, base ' +
        'subject (without Re:/Fwd:) or size; `-` first for descending; ties by mailbox and ' +
        'uid. Default: newest first (-date). File and IMAP backends order by date or uid ' +
        '(501 otherwise). `mailboxes` lists every match by mailbox, then uid, in any order.',
    },
    cursor: {
      type: 'string',
      minLength: 1,
      maxLength: 1024,
      description: "the previous page's `nextCursor` (same q, mailbox and order)",
    },
  }),
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
        nextCursor: { type: ['string', 'null'], description: 'null on the last page' },
      },
    },
    ...errorsFor(400, 401, 404, 501, 503),
  },
};

module.exports = { search };
