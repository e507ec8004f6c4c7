'use strict';

// RENAME (RFC 3501 6.3.5). Renaming INBOX is left to the service (it moves the messages).
const { arity, mailboxArg } = require('../args');
const { no } = require('../errors');
const { mailboxNames } = require('../listing');

module.exports = {
  name: 'RENAME',
  states: ['auth', 'selected'],
  async run(s, cmd) {
    arity(cmd, 2);
    const from = mailboxArg(cmd.args[0]);
    const to = mailboxArg(cmd.args[1]).replace(/\/+$/, '');
    if (!to || to === 'INBOX') throw no('Target mailbox already exists', 'ALREADYEXISTS');
    const names = await mailboxNames(s);
    if (!names.has(from)) throw no('No such mailbox', 'NONEXISTENT');
    if (names.has(to)) throw no('Target mailbox already exists', 'ALREADYEXISTS');
    await s.backend.renameMailbox(from, to);
  },
};
