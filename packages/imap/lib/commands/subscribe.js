'use strict';

// SUBSCRIBE (RFC 3501 6.3.6).
const { arity, mailboxArg } = require('../args');

module.exports = {
  name: 'SUBSCRIBE',
  states: ['auth', 'selected'],
  async run(s, cmd) {
    arity(cmd, 1);
    await s.backend.subscribe(mailboxArg(cmd.args[0]));
  },
};
