'use strict';

// CLOSE (RFC 3501 6.4.2): silently expunge \Deleted messages (unless read-only), then leave;
// UNSELECT (RFC 3691): leave the mailbox without expunging.
const { arity } = require('../protocol/args');

module.exports = {
  name: ['CLOSE', 'UNSELECT'],
  states: ['selected'],
  usesView: true,
  sync: false,
  async run(s, cmd) {
    arity(cmd, 0);
    const v = s.view;
    s.view = null;
    s.state = 'auth';
    if (cmd.name === 'CLOSE' && !v.readOnly) await s.backend.expunge(v.name);
  },
};
