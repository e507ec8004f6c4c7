'use strict';

// STORE (RFC 3501 6.4.6); the work is in ../store.js, shared with UID STORE.
const { runStore } = require('../store');

module.exports = {
  name: 'STORE',
  states: ['selected'],
  usesView: true,
  expunges: false,
  run: (s, cmd) => runStore(s, cmd.args, false),
};
