'use strict';

// UNSUBSCRIBE (RFC 3501 6.3.7).
const { arity, mailboxArg } = require('../args');

module.exports = {
  name: 'UNSUBSCRIBE',
  states: ['auth', 'selected'],
  async run(s, cmd) {
    arity(cmd, 1);
    await s.backend.unsubscribe(mailboxArg(cmd.args[0]));
  },
};
