'use strict';

// CREATE (RFC 3501 6.3.3); a trailing delimiter is dropped (the name is the mailbox).
const { arity, mailboxArg } = require('../protocol/args');
const { bad, no } = require('../errors');
const { mailboxNames } = require('../listing');

module.exports = {
  name: 'CREATE',
  states: ['auth', 'selected'],
  async run(s, cmd) {
    arity(cmd, 1, 2);
    // The only second argument is RFC 4466's create-params list: `CREATE Foo Bar/Baz` is two
    // names, a syntax error (issue 30 item 13), not a CREATE of Foo.
    if (cmd.args.length === 2 && cmd.args[1].type !== 'list') {
      throw bad('Wrong number of arguments to CREATE');
    }
    const name = mailboxArg(cmd.args[0]).replace(/\/+$/, '');
    if (name === 'INBOX' || !name || (await mailboxNames(s)).has(name)) {
      throw no('Mailbox already exists', 'ALREADYEXISTS');
    }
    // CREATE does not subscribe (RFC 3501 6.3.3, 6.3.6: the client subscribes when it wants
    // to); the store's default (subscribed) is for imports and the webmail.
    await s.backend.createMailbox(name, { subscribed: false });
  },
};
