'use strict';

// MAIL FROM (RFC 5321 4.1.1.2) with SIZE (RFC 1870) and BODY (RFC 6152); starts a transaction.
const { reply } = require('../protocol/replies');
const { parsePath } = require('../protocol/parser');

module.exports = {
  name: 'MAIL',
  async run(s, rest) {
    if (s.tx) return s.write(reply(503, '5.5.1', 'MAIL already given'));
    let p;
    try {
      p = parsePath(rest, 'FROM');
    } catch (err) {
      return s.write(reply(501, '5.5.4', err.message));
    }
    const size = p.params.get('SIZE');
    if (size !== undefined) {
      if (typeof size !== 'string' || !/^\d{1,15}$/.test(size)) {
        return s.write(reply(501, '5.5.4', 'Invalid SIZE'));
      }
      if (Number(size) > s.limits.maxMessage) {
        return s.write(reply(552, '5.3.4', 'Message too big'));
      }
    }
    const body = p.params.get('BODY');
    if (body !== undefined && !/^(7BIT|8BITMIME)$/i.test(String(body))) {
      return s.write(reply(501, '5.5.4', 'Invalid BODY'));
    }
    s.tx = { sender: p.address, rcpts: [], chunking: false };
    s.write(reply(250, '2.1.0', 'Ok'));
  },
};
