'use strict';

// SELECT (RFC 3501 6.3.1): open a mailbox read-write; EXAMINE (6.3.2): read-only (no STORE,
// EXPUNGE, implicit \Seen).
const { select } = require('../select');

module.exports = {
  name: ['SELECT', 'EXAMINE'],
  states: ['auth', 'selected'],
  sync: false,
  run: (s, cmd) => select(s, cmd, cmd.name === 'EXAMINE'),
};
