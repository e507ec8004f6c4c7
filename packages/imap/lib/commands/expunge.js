'use strict';

// EXPUNGE (RFC 3501 6.4.3): removes every \Deleted message of the selected mailbox.
const { arity } = require('../args');
const { no } = require('../errors');
const { announceExpunged } = require('../expunge');
const { expungeResult } = require('../mail-data');

module.exports = {
  name: 'EXPUNGE',
  states: ['selected'],
  usesView: true,
  async run(s, cmd) {
    arity(cmd, 0);
    if (s.view.readOnly) throw no('Mailbox is read-only', 'READ-ONLY');
    const { uids, highestModseq } = expungeResult(await s.backend.expunge(s.view.name));
    announceExpunged(s, uids, highestModseq);
  },
};
