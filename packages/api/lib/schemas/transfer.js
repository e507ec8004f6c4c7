'use strict';

const { errorsFor, uid, mailboxName, mailboxParams, backendQuery, security } = require('./common');

const body = {
  type: 'object',
  additionalProperties: false,
  required: ['uids', 'target'],
  properties: {
    uids: { type: 'array', items: uid, minItems: 1, maxItems: 10000 },
    target: mailboxName,
  },
};
const answer = {
  type: 'object',
  properties: {
    uidvalidity: { type: 'integer', description: "the target's UIDVALIDITY" },
    map: {
      type: 'array',
      description: '[source uid, new uid in the target] per message (RFC 4315 COPYUID)',
      items: { type: 'array', items: { type: 'integer' }, minItems: 2, maxItems: 2 },
    },
  },
};

const transfer = (verb, what) => ({
  tags: ['mail'],
  summary: `${verb} messages to another mailbox (${what})`,
  security,
  params: mailboxParams,
  body,
  querystring: backendQuery,
  response: { 200: answer, ...errorsFor(400, 401, 404, 501, 503) },
});

/** POST /mailboxes/{mailbox}/copy */
const copy = transfer('Copy', 'IMAP UID COPY');
/** POST /mailboxes/{mailbox}/move */
const move = transfer('Move', 'IMAP UID MOVE, RFC 6851: gone from the source at once');

module.exports = { copy, move };
