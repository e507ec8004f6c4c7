'use strict';

// FETCH (RFC 3501 6.4.5); the work is in ../fetch.js, shared with UID FETCH.
const { runFetch } = require('../fetch');

module.exports = {
  name: 'FETCH',
  states: ['selected'],
  usesView: true,
  expunges: false,
  readsOnly: true,
  // runFetch checks the selected mailbox itself (with its read of the bytes).
  checksView: true,
  run: (s, cmd) => runFetch(s, cmd.args, false),
};
