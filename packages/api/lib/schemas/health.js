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
      properties: { status: { type: 'string' }, db: { type: 'string' } },
    },
    ...errorsFor(503),
  },
};

module.exports = { health };
