'use strict';

// CAPABILITY (RFC 3501 6.1.1): the list depends on state and on TLS (server.capabilities).
const { atom } = require('../protocol/writer');
const { arity } = require('../protocol/args');

module.exports = {
  name: 'CAPABILITY',
  states: ['notauth', 'auth', 'selected'],
  async run(s, cmd) {
    arity(cmd, 0);
    s.untagged([atom('CAPABILITY'), ...s.server.capabilities(s).map(atom)]);
  },
};
