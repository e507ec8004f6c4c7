'use strict';

// EXAMINE (RFC 3501 6.3.2): open a mailbox read-only (no STORE, EXPUNGE, implicit \Seen).
const { select } = require('../select');

module.exports = {
  name: 'EXAMINE',
  states: ['auth', 'selected'],
  sync: false,
  run: (s, cmd) => select(s, cmd, true),
};
