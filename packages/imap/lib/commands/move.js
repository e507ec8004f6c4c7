'use strict';

// MOVE (RFC 6851).
const { runCopy } = require('./copy');

module.exports = {
  name: 'MOVE',
  states: ['selected'],
  usesView: true,
  run: (s, cmd) => runCopy(s, cmd.args, { byUid: false, move: true }),
};
