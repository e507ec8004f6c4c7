'use strict';

// RSET (RFC 5321 4.1.1.5): drops the transaction, keeps the LHLO.
const { reply } = require('../protocol/replies');

module.exports = {
  name: 'RSET',
  needsLhlo: false,
  async run(s) {
    s.resetTransaction();
    s.write(reply(250, '2.0.0', 'Ok'));
  },
};
