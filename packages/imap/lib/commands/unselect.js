'use strict';

// UNSELECT (RFC 3691): leave the mailbox without expunging.
const { arity } = require('../args');

module.exports = {
  name: 'UNSELECT',
  states: ['selected'],
  sync: false,
  async run(s, cmd) {
    arity(cmd, 0);
    s.view = null;
    s.state = 'auth';
  },
};
