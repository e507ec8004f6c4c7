'use strict';

// RENAME (RFC 3501 6.3.5). Renaming INBOX is left to the service (it moves the messages).
const { arity, mailboxArg } = require('../args');
const { no } = require('../errors');

module.exports = {
  name: 'RENAME',
  states: ['auth', 'selected'],
  async run(s, cmd) {
    arity(cmd, 2);
    const from = mailboxArg(cmd.args[0]);
    const to = mailboxArg(cmd.args[1]).replace(/\/+$/, '');
    if (!to || to === 'INBOX') throw no('Target mailbox already exists', 'ALREADYEXISTS');
    const boxes = await s.backend.listMailboxes();
    if (!boxes.some((b) => b.name === from)) throw no('No such mailbox', 'NONEXISTENT');
    if (boxes.some((b) => b.name === to))
      throw no('Target mailbox already exists', 'ALREADYEXISTS');
    await s.backend.renameMailbox(from, to);
  },
};
