'use strict';

// STATUS (RFC 3501 6.3.10) with HIGHESTMODSEQ (RFC 7162 3.1.6).
const { atom } = require('../protocol/writer');
const { arity, mailboxArg, listArg, atomArg, encodeUtf7 } = require('../protocol/args');
const { bad } = require('../errors');

const ITEMS = {
  MESSAGES: (st) => st.total,
  RECENT: (st) => st.recent || 0,
  UIDNEXT: (st) => st.uidnext,
  UIDVALIDITY: (st) => st.uidvalidity,
  UNSEEN: (st) => st.unseen,
  HIGHESTMODSEQ: (st) => st.highestModseq,
};

module.exports = {
  name: 'STATUS',
  states: ['auth', 'selected'],
  async run(s, cmd) {
    arity(cmd, 2);
    const name = mailboxArg(cmd.args[0]);
    const items = listArg(cmd.args[1], 'status items').map((t) => atomArg(t, 'status item'));
    if (!items.length) throw bad('No status items');
    for (const it of items) if (!ITEMS[it]) throw bad(`Unknown status item ${it}`);
    if (items.includes('HIGHESTMODSEQ')) s.condstore = true;
    const st = await s.backend.status(name, { warm: false });
    const out = [];
    for (const it of items) out.push(atom(it), Number(ITEMS[it](st) || 0));
    s.untagged([atom('STATUS'), encodeUtf7(name), out]);
  },
};
