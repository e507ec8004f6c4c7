'use strict';

// CREATE (RFC 3501 6.3.3); a trailing delimiter is dropped (the name is the mailbox).
const { arity, mailboxArg } = require('../args');
const { no } = require('../errors');

module.exports = {
  name: 'CREATE',
  states: ['auth', 'selected'],
  async run(s, cmd) {
    arity(cmd, 1, 2);
    const name = mailboxArg(cmd.args[0]).replace(/\/+$/, '');
    if (name === 'INBOX' || !name) throw no('Mailbox already exists', 'ALREADYEXISTS');
    const boxes = await s.backend.listMailboxes();
    if (boxes.some((b) => b.name === name)) throw no('Mailbox already exists', 'ALREADYEXISTS');
    await s.backend.createMailbox(name);
  },
};
