'use strict';

// DELETE (RFC 3501 6.3.4): INBOX cannot be deleted.
const { arity, mailboxArg } = require('../protocol/args');
const { no } = require('../errors');

module.exports = {
  name: 'DELETE',
  states: ['auth', 'selected'],
  async run(s, cmd) {
    arity(cmd, 1);
    const name = mailboxArg(cmd.args[0]);
    if (name === 'INBOX') throw no('INBOX cannot be deleted', 'CANNOT');
    if (s.view && s.view.name === name) throw no('Mailbox is selected', 'INUSE');
    await s.backend.deleteMailbox(name);
  },
};
