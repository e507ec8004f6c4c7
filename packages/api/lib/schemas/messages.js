'use strict';

const {
  errorsFor,
  headerProps,
  mailboxName,
  uid,
  mailboxParams,
  messageParams,
  security,
  MAX_LIMIT,
  backendQuery,
  queryWithBackend,
} = require('./common');

/** GET /mailboxes/{mailbox}/messages */
const scan = {
  tags: ['mail'],
  summary: 'Header rows, keyset-paged; Accept: application/x-ndjson streams the mailbox',
  description:
    'Pages follow `nextCursor`. With `Accept: application/x-ndjson` the whole mailbox is ' +
    'streamed, one header row per line, in `order` (limit and cursor are ignored).',
  security,
  params: mailboxParams,
  querystring: queryWithBackend({
    limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: 50 },
    cursor: { type: 'string', minLength: 1, maxLength: 512 },
    order: {
      type: 'string',
      enum: ['uid', '-uid', 'date', '-date'],
      description:
        'date: the Date header, else the received (internal) date, ties by uid; uid: arrival ' +
        '(import) order; `-` first for descending. Default: pages newest first (-date); the ' +
        'NDJSON stream of the whole mailbox in uid order (served from the list cache)',
    },
    view: {
      type: 'string',
      enum: ['full', 'list'],
      default: 'full',
      description:
        'list: the list view of each row (uid, from, subject, date, internalDate, size, ' +
        'flags, keywords, hasAttachments, modseq): no recipients, messageId, preview or threadId',
    },
  }),
  response: {
    200: {
      type: 'object',
      properties: {
        messages: { type: 'array', items: { $ref: 'HeaderRow#' } },
        total: { type: 'integer', description: 'messages in the mailbox' },
        nextCursor: { type: ['string', 'null'] },
      },
    },
    ...errorsFor(400, 401, 404, 429, 501, 503),
  },
};

const addressList = { type: 'array', items: { $ref: 'Address#' } };

/** GET /mailboxes/{mailbox}/messages/{uid} */
const view = {
  tags: ['mail'],
  summary: 'One message: headers, text, sanitized HTML, attachment list',
  security,
  params: messageParams,
  querystring: queryWithBackend({
    images: {
      type: 'string',
      enum: ['blocked', 'remote'],
      default: 'blocked',
      description: 'remote images in the HTML: blocked (URL kept in data-blocked-src) or loaded',
    },
  }),
  response: {
    200: {
      type: 'object',
      properties: {
        mailbox: { type: 'string' },
        ...headerProps,
        headers: {
          type: 'array',
          items: {
            type: 'object',
            properties: { name: { type: 'string' }, value: { type: 'string' } },
          },
        },
        to: addressList,
        cc: addressList,
        text: { type: 'string' },
        html: {
          type: ['string', 'null'],
          description:
            'sanitized (sanitize-html); remote images blocked unless images=remote; cid: links point at the attachments',
        },
        truncated: { type: 'boolean', description: 'a body part was over a view limit' },
        attachments: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              part: { type: 'string' },
              contentType: { type: 'string' },
              filename: { type: ['string', 'null'] },
              size: { type: 'integer' },
              contentId: { type: ['string', 'null'] },
            },
          },
        },
      },
    },
    ...errorsFor(400, 401, 404, 422, 501, 503),
  },
};

/** GET /mailboxes/{mailbox}/messages/{uid}/raw */
const raw = {
  tags: ['mail'],
  summary: 'The message exactly as stored (message/rfc822)',
  security,
  params: messageParams,
  querystring: backendQuery,
  produces: ['message/rfc822'],
  response: {
    200: { description: 'raw RFC 5322 bytes', type: 'string', format: 'binary' },
    ...errorsFor(400, 401, 404, 501, 503),
  },
};

/** GET /mailboxes/{mailbox}/messages/{uid}/attachments/{part} */
const attachment = {
  tags: ['mail'],
  summary: 'One MIME part, decoded, with its content type and file name',
  security,
  params: {
    type: 'object',
    required: ['mailbox', 'uid', 'part'],
    properties: {
      mailbox: mailboxName,
      uid,
      part: { type: 'string', pattern: '^[0-9]{1,4}(\\.[0-9]{1,4}){0,49}(\\.uu[0-9]{1,4})?$' },
    },
  },
  querystring: backendQuery,
  response: {
    200: { description: 'the decoded part', type: 'string', format: 'binary' },
    ...errorsFor(400, 401, 404, 501, 503),
  },
};

module.exports = { scan, view, raw, attachment };
