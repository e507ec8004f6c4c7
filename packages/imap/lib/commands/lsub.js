'use strict';

// LSUB (RFC 3501 6.3.9): the subscribed mailboxes matching the pattern.
const { arity, astring } = require('../protocol/args');
const { sendList } = require('../listing');

module.exports = {
  name: 'LSUB',
  states: ['auth', 'selected'],
  async run(s, cmd) {
    arity(cmd, 2);
    const reference = astring(cmd.args[0], 'reference');
    const pattern = astring(cmd.args[1], 'pattern');
    const subs = new Set(await s.backend.listSubscriptions());
    const boxes = (await s.backend.listMailboxes()).map((b) => ({
      ...b,
      subscribed: subs.has(b.name),
    }));
    // Subscriptions may name mailboxes that no longer exist (RFC 3501 6.3.6).
    for (const name of subs)
      if (!boxes.some((b) => b.name === name)) boxes.push({ name, subscribed: true });
    await sendList(s, {
      command: 'LSUB',
      reference,
      pattern,
      boxes: boxes.filter((b) => b.subscribed),
    });
  },
};
