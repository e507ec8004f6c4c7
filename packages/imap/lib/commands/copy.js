'use strict';

// COPY (RFC 3501 6.4.7) with COPYUID (RFC 4315).
const { runCopy } = require('../copy');

module.exports = {
  name: 'COPY',
  states: ['selected'],
  usesView: true,
  expunges: false,
  run: (s, cmd) => runCopy(s, cmd.args, { byUid: false, move: false }),
};
