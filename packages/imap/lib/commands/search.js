'use strict';

// SEARCH (RFC 3501 6.4.4); the work is in ../search.js, shared with UID SEARCH.
const { runSearch, sendSearch } = require('../search');

module.exports = {
  name: 'SEARCH',
  states: ['selected'],
  usesView: true,
  expunges: false,
  readsOnly: true,
  async run(s, cmd) {
    sendSearch(s, await runSearch(s, cmd.args), false);
  },
};
