'use strict';

// LIST (RFC 3501 6.3.8), with RFC 5258 selection options SUBSCRIBED and SPECIAL-USE
// (RFC 6154 5.1) accepted; RETURN options other than SUBSCRIBED/SPECIAL-USE are ignored.
const { astring, atomArg } = require('../protocol/args');
const { bad } = require('../errors');
const { sendList } = require('../listing');

const MAX_PATTERNS = 16;

module.exports = {
  name: 'LIST',
  states: ['auth', 'selected'],
  async run(s, cmd) {
    const args = [...cmd.args];
    const select = new Set();
    if (args[0] && args[0].type === 'list') {
      for (const t of args.shift().value) select.add(atomArg(t, 'selection option'));
    }
    if (args.length < 2) throw bad('LIST needs a reference and a pattern');
    const reference = astring(args[0], 'reference');
    const patterns =
      args[1].type === 'list'
        ? args[1].value.map((t) => astring(t, 'pattern'))
        : [astring(args[1], 'pattern')];
    // RFC 5258 3 allows a list of patterns; each costs a pass over the user's names.
    if (patterns.length > MAX_PATTERNS) throw bad('Too many LIST patterns');
    const ret = new Set();
    if (args[2]) {
      if (atomArg(args[2], 'RETURN') !== 'RETURN' || !args[3] || args[3].type !== 'list') {
        throw bad('Invalid LIST return options');
      }
      for (const t of args[3].value) if (t.type === 'atom') ret.add(t.value.toUpperCase());
    }
    const boxes = await s.backend.listMailboxes();
    if (select.has('SUBSCRIBED')) {
      // RFC 5258 3.1: a subscribed name without a mailbox (deleted since: RFC 3501 6.3.6 keeps
      // its subscription) is listed too, \NonExistent.
      const names = new Set(boxes.map((b) => b.name));
      for (const name of await s.backend.listSubscriptions())
        if (!names.has(name)) boxes.push({ name, subscribed: true, nonExistent: true });
    }
    for (const pattern of patterns) {
      await sendList(s, {
        command: 'LIST',
        reference,
        pattern,
        boxes,
        onlySubscribed: select.has('SUBSCRIBED'),
        onlySpecialUse: select.has('SPECIAL-USE'),
        markSubscribed: select.has('SUBSCRIBED') || ret.has('SUBSCRIBED'),
      });
    }
  },
};
