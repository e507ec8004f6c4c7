'use strict';

// QUIT (RFC 5321 4.1.1.10): answers and closes.
const { reply } = require('../protocol/replies');

module.exports = {
  name: 'QUIT',
  needsLhlo: false,
  async run(s) {
    s.write(reply(221, '2.0.0', 'Bye'));
    s.close();
  },
};
