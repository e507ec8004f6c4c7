'use strict';

// SELECT (RFC 3501 6.3.1): open a mailbox read-write.
const { select } = require('../select');

module.exports = {
  name: 'SELECT',
  states: ['auth', 'selected'],
  sync: false,
  run: (s, cmd) => select(s, cmd, false),
};
