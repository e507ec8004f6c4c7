'use strict';

// CLOSE (RFC 3501 6.4.2): silently expunge \Deleted messages (unless read-only), then leave.
const { arity } = require('../args');

module.exports = {
  name: 'CLOSE',
  states: ['selected'],
  sync: false,
  async run(s, cmd) {
    arity(cmd, 0);
    const v = s.view;
    s.view = null;
    s.state = 'auth';
    if (!v.readOnly) await s.backend.expunge(v.name);
  },
};
