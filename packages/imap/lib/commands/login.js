'use strict';

// LOGIN (RFC 3501 6.2.3): refused while plaintext passwords are not allowed (LOGINDISABLED).
const { arity, astring } = require('../protocol/args');
const { no } = require('../errors');
const { authenticate } = require('../auth');

module.exports = {
  name: 'LOGIN',
  states: ['notauth'],
  async run(s, cmd) {
    arity(cmd, 2);
    const user = astring(cmd.args[0], 'user name');
    const password = astring(cmd.args[1], 'password');
    if (!s.privacyOk) throw no(s.privacyRequired('login'), 'PRIVACYREQUIRED');
    return authenticate(s, user, password);
  },
};
