'use strict';

const { errorsFor, security } = require('./common');

/*
 * GET /migration: the whole-server migration's figures (issue 33; service.fleet status and
 * report): what `mailgate migrate --status --json` and `--report --json` print, in one answer.
 */

const num = { type: ['number', 'null'] };
const error = {
  type: ['object', 'null'],
  properties: { code: { type: 'string' }, message: { type: 'string' } },
};

const fleet = {
  type: 'object',
  properties: {
    accounts: { type: 'integer' },
    queued: { type: 'integer' },
    running: { type: 'integer' },
    verified: { type: 'integer' },
    cutover: { type: 'integer' },
    failed: { type: 'integer' },
    messages: { type: 'integer' },
    bytes: { type: 'integer' },
    seconds: { type: 'number' },
    rate: { type: 'number', description: 'messages/s moved by this run over its time so far' },
    etaSeconds: { ...num, description: 'null: not known yet' },
  },
};

const running = {
  type: 'object',
  properties: {
    user: { type: 'string' },
    upstream: { type: 'string' },
    worker: { type: ['string', 'null'] },
    messages: { type: 'integer' },
    bytes: { type: 'integer' },
    upstreamMessages: num,
    rate: { type: 'number' },
    etaSeconds: num,
  },
};

const account = {
  type: 'object',
  properties: {
    user: { type: 'string' },
    state: { type: 'string', enum: ['queued', 'running', 'verified', 'cutover', 'failed'] },
    route: { type: 'string' },
    upstream: { type: 'string' },
    messages: { type: 'integer' },
    bytes: { type: 'integer' },
    upstreamMessages: num,
    upstreamBytes: num,
    attempts: { type: 'integer' },
    seconds: num,
    error,
  },
};

/** GET /migration */
const migration = {
  tags: ['admin'],
  summary: 'Whole-server migration: accounts per state, rate, ETA, every account (admin token)',
  security,
  response: {
    200: {
      type: 'object',
      properties: {
        at: { type: 'string', format: 'date-time' },
        fleet,
        running: { type: 'array', items: running },
        accounts: { type: 'array', items: account },
        failures: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              user: { type: 'string' },
              upstream: { type: 'string' },
              attempts: { type: 'integer' },
              code: { type: 'string' },
              message: { type: 'string' },
            },
          },
        },
      },
    },
    ...errorsFor(401, 403, 503),
  },
};

module.exports = { migration };
