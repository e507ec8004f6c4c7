'use strict';

// AUTHENTICATE PLAIN (RFC 3501 6.2.2, RFC 4616), with an initial response (RFC 4959 SASL-IR)
// or after a `+` continuation. `*` cancels (BAD).
const { arity, atomArg, astring } = require('../protocol/args');
const { bad, no } = require('../errors');
const { authenticate } = require('../auth');

module.exports = {
  name: 'AUTHENTICATE',
  states: ['notauth'],
  async run(s, cmd) {
    arity(cmd, 1, 2);
    const mech = atomArg(cmd.args[0], 'mechanism');
    if (mech !== 'PLAIN') throw no('Unsupported authentication mechanism', 'CANNOT');
    if (!s.privacyOk) throw no(s.privacyRequired('authentication'), 'PRIVACYREQUIRED');
    let response = cmd.args[1] ? astring(cmd.args[1], 'initial response') : null;
    if (response === null) {
      s.send(Buffer.from('+ \r\n'));
      response = await s.readLine();
      if (response === null) return { answered: true };
    }
    if (response.trim() === '*') throw bad('Authentication cancelled');
    if (response === '=') response = '';
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(response.trim())) throw bad('Invalid base64');
    const parts = Buffer.from(response.trim(), 'base64').toString('utf8').split('\0');
    if (parts.length !== 3) throw bad('Invalid PLAIN response');
    const [authz, user, password] = parts;
    if (authz && authz !== user)
      throw no('Authorization identity not allowed', 'AUTHORIZATIONFAILED');
    return authenticate(s, user, password);
  },
};
