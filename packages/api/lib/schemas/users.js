'use strict';

const { PASSWORD_MIN_LENGTH, PASSWORD_MAX_LENGTH } = require('@mailgate/core');
const { errorsFor, tokenAnswer, security } = require('./common');

const userName = { type: 'string', pattern: '^[A-Za-z0-9._@+-]{1,128}$' };

/** POST /users */
const createUser = {
  tags: ['admin'],
  summary: 'Create a user (admin token)',
  security,
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'password'],
    properties: {
      name: userName,
      // The length rule is core's checkPassword, applied by the route: the CLI applies the
      // same one, and both answer INVALID_PASSWORD (a schema bound would answer INVALID_INPUT).
      password: {
        type: 'string',
        description: `${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters (INVALID_PASSWORD otherwise)`,
      },
    },
  },
  response: {
    201: { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } } },
    ...errorsFor(400, 401, 403, 409, 503),
  },
};

/** POST /users/{user}/tokens */
const createToken = {
  tags: ['admin'],
  summary: 'Create a bearer token for a user (admin token)',
  security,
  params: { type: 'object', properties: { user: userName } },
  body: {
    type: ['object', 'null'],
    additionalProperties: false,
    properties: { ttlSeconds: { type: 'integer', minimum: 60, maximum: 10 * 365 * 86400 } },
  },
  response: { 201: tokenAnswer, ...errorsFor(400, 401, 403, 404, 503) },
};

module.exports = { createUser, createToken };
