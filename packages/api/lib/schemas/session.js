'use strict';

const { errorsFor, tokenAnswer, security } = require('./common');

/** POST /session */
const login = {
  tags: ['auth'],
  summary: 'Log in: exchange user name and password for a bearer token',
  security: [],
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['user', 'password'],
    properties: {
      user: { type: 'string', minLength: 1, maxLength: 128 },
      password: { type: 'string', minLength: 1, maxLength: 1024 },
    },
  },
  response: { 201: tokenAnswer, ...errorsFor(400, 401, 429, 503) },
};

/** DELETE /session */
const logout = {
  tags: ['auth'],
  summary: 'Log out: revoke the bearer token of this request',
  security,
  response: { 204: { type: 'null', description: 'Revoked' }, ...errorsFor(401, 503) },
};

module.exports = { login, logout };
