'use strict';

// VRFY (RFC 5321 3.5.3): never confirms an address (no user enumeration).
const { reply } = require('../protocol/replies');

module.exports = {
  name: 'VRFY',
  needsLhlo: false,
  async run(s) {
    s.write(reply(252, '2.5.2', 'Cannot VRFY user; try RCPT to attempt delivery'));
  },
};
