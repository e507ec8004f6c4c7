'use strict';

const { errorsFor } = require('./common');

/** GET /health */
const health = {
  tags: ['health'],
  summary: 'Liveness and PostgreSQL reachability',
  security: [],
  response: {
    200: {
      type: 'object',
      properties: {
        status: { type: 'string', enum: ['ok', 'saturated'] },
        db: { type: 'string' },
        pool: {
          type: 'object',
          description: 'the database pool: connections in use, idle, its size, requests waiting',
          properties: {
            size: { type: 'integer' },
            used: { type: 'integer' },
            free: { type: 'integer' },
            waiting: { type: 'integer' },
            saturated: { type: 'boolean' },
          },
        },
        users: {
          type: 'object',
          description:
            'per-user share: operations a user may run at once, users with work, operations queued',
          properties: {
            perUser: { type: 'integer' },
            active: { type: 'integer' },
            queued: { type: 'integer' },
          },
        },
      },
    },
    ...errorsFor(503),
  },
};

module.exports = { health };
