'use strict';

// RENAME (RFC 3501 6.3.5). Renaming INBOX is left to the service (it moves the messages).
const { arity, mailboxArg } = require('../protocol/args');
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
    // The selected mailbox (or one of its parents) renamed by this session stays selected
    // under its new name, as in Dovecot: same mailbox, same UIDVALIDITY and UIDs. Without this
    // the sync after RENAME looked for the old name and answered NO for a rename that had
    // succeeded, and the next command ended the session (issue 29 item 8).
    const v = s.view;
    if (v && from !== 'INBOX' && (v.name === from || v.name.startsWith(`${from}/`))) {
      v.name = to + v.name.slice(from.length);
    }
  },
};
