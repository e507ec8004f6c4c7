'use strict';

// CHECK (RFC 3501 6.4.1): every change is committed when its command completes; only the
// untagged updates of a NOOP are left to do.
const { arity } = require('../protocol/args');

module.exports = {
  name: 'CHECK',
  states: ['selected'],
  async run(s, cmd) {
    arity(cmd, 0);
  },
};
