'use strict';

const { errorsFor, tokenAnswer } = require('./common');

/** POST /session/link */
const redeem = {
  tags: ['auth'],
  summary: 'Redeem a one-time sign-in link: its token is revoked, a session token is returned',
  description:
    'Sign-in links (`npm run demo`, `mailgate serve` for a person at a terminal) carry a ' +
    'short-lived token in the URL fragment. The page trades it here, once: a second use is 401.',
  security: [],
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['link'],
    properties: { link: { type: 'string', minLength: 1, maxLength: 512 } },
  },
  response: { 201: tokenAnswer, ...errorsFor(400, 401, 503) },
};

module.exports = { redeem };
