'use strict';

// SUBSCRIBE and UNSUBSCRIBE (RFC 3501 6.3.6, 6.3.7): the one argument names the mailbox.
const { arity, mailboxArg } = require('../protocol/args');

module.exports = {
  name: ['SUBSCRIBE', 'UNSUBSCRIBE'],
  states: ['auth', 'selected'],
  async run(s, cmd) {
    arity(cmd, 1);
    const name = mailboxArg(cmd.args[0]);
    if (cmd.name === 'SUBSCRIBE') await s.backend.subscribe(name);
    else await s.backend.unsubscribe(name);
  },
};
