'use strict';

// LOGOUT (RFC 3501 6.1.3): BYE, tagged OK, close.
const { arity } = require('../protocol/args');

module.exports = {
  name: 'LOGOUT',
  states: ['notauth', 'auth', 'selected'],
  sync: false,
  async run(s, cmd) {
    arity(cmd, 0);
    s.send(Buffer.from('* BYE mailgate logging out\r\n'));
    s.tagged(cmd.tag, 'OK', 'LOGOUT completed');
    s.socket.end();
    s.cleanup();
  },
};
