'use strict';

// DATA (RFC 2033 4.2): after the message, one reply per accepted recipient, in RCPT order,
// each sent only once that recipient's copy is committed (or refused).
const { reply } = require('../protocol/replies');

module.exports = {
  name: 'DATA',
  async run(s, rest) {
    if (rest) return s.write(reply(501, '5.5.4', 'Syntax: DATA'));
    if (!s.tx) return s.write(reply(503, '5.5.1', 'MAIL first'));
    if (s.tx.chunking) return s.write(reply(503, '5.5.1', 'BDAT in progress'));
    if (!s.tx.rcpts.length) return s.write(reply(503, '5.5.1', 'No valid recipients'));
    s.framer.expectData();
    s.write(reply(354, null, 'Start mail input; end with <CRLF>.<CRLF>'));
  },
  /** The message ended (the framer's `data` item). */
  async finish(s) {
    const { raw } = s.framer.takeMessage();
    await s.deliverAll(raw);
  },
};
