'use strict';

// NOOP (RFC 3501 6.1.2): does nothing but let the session push pending updates.
const { arity } = require('../protocol/args');

module.exports = {
  name: 'NOOP',
  states: ['notauth', 'auth', 'selected'],
  async run(s, cmd) {
    arity(cmd, 0);
  },
};
