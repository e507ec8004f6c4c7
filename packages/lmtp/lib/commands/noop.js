'use strict';

// NOOP (RFC 5321 4.1.1.9).
const { reply } = require('../protocol/replies');

module.exports = {
  name: 'NOOP',
  needsLhlo: false,
  async run(s) {
    s.write(reply(250, '2.0.0', 'Ok'));
  },
};
