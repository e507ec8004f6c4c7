'use strict';

const { errorsFor, mailboxParams, backendQuery, security } = require('./common');

// A new name is checked by the one rule (@mailgate/core mailbox-name.js) in the service, so
// that every bad name answers the same INVALID_MAILBOX_NAME as IMAP and imports do.
const nameBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: {
      type: 'string',
      maxLength: 4096,
      description:
        'At most 512 characters; no `.` or `..` path segments, no control characters ' +
        '(else 400 INVALID_MAILBOX_NAME)',
    },
  },
};
const nameAnswer = { type: 'object', properties: { name: { type: 'string' } } };

/** POST /mailboxes */
const create = {
  tags: ['mailboxes'],
  summary: 'Create a mailbox (IMAP CREATE)',
  security,
  body: nameBody,
  querystring: backendQuery,
  response: { 201: nameAnswer, ...errorsFor(400, 401, 409, 501, 503) },
};

/** PATCH /mailboxes/{mailbox} */
const rename = {
  tags: ['mailboxes'],
  summary: 'Rename a mailbox (IMAP RENAME; its messages keep their uids)',
  security,
  params: mailboxParams,
  body: nameBody,
  querystring: backendQuery,
  response: { 200: nameAnswer, ...errorsFor(400, 401, 404, 409, 501, 503) },
};

/** DELETE /mailboxes/{mailbox} */
const remove = {
  tags: ['mailboxes'],
  summary: 'Delete a mailbox and its messages (IMAP DELETE; INBOX cannot be deleted)',
  security,
  params: mailboxParams,
  querystring: backendQuery,
  response: {
    204: { type: 'null', description: 'Deleted' },
    ...errorsFor(400, 401, 404, 501, 503),
  },
};

module.exports = { create, rename, remove };
