'use strict';

// CREATE (RFC 3501 6.3.3); a trailing delimiter is dropped (the name is the mailbox).
const { arity, mailboxArg } = require('../args');
const { no } = require('../errors');
const { mailboxNames } = require('../listing');

module.exports = {
  name: 'CREATE',
  states: ['auth', 'selected'],
  async run(s, cmd) {
    arity(cmd, 1, 2);
    const name = mailboxArg(cmd.args[0]).replace(/\/+$/, '');
    if (name === 'INBOX' || !name || (await mailboxNames(s)).has(name)) {
      throw no('Mailbox already exists', 'ALREADYEXISTS');
    }
    await s.backend.createMailbox(name);
  },
};
