'use strict';

// NAMESPACE (RFC 2342): one personal namespace, no prefix, delimiter "/".
const { atom } = require('../protocol/writer');
const { arity } = require('../protocol/args');

module.exports = {
  name: 'NAMESPACE',
  states: ['auth', 'selected'],
  async run(s, cmd) {
    arity(cmd, 0);
    s.untagged([atom('NAMESPACE'), [['', '/']], null, null]);
  },
};
