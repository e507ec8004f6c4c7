'use strict';

// RCPT TO (RFC 5321 4.1.1.3): the recipient is resolved now (the service's address rule), so
// an unknown user is refused before the message is sent (550 5.1.1); a proxied user is
// accepted when their mail is relayed to their old server (the upstream's reply comes after
// the message) and gets a temporary 451 4.2.1 until the cutover otherwise; a database fault
// is a temporary 451 4.3.0.
const { reply, outcomeReply } = require('../protocol/replies');
const { parsePath } = require('../protocol/parser');

module.exports = {
  name: 'RCPT',
  async run(s, rest) {
    if (!s.tx) return s.write(reply(503, '5.5.1', 'MAIL first'));
    if (s.tx.chunking) return s.write(reply(503, '5.5.1', 'BDAT in progress'));
    let p;
    try {
      p = parsePath(rest, 'TO');
    } catch (err) {
      return s.write(reply(501, '5.5.4', err.message));
    }
    if (s.tx.rcpts.length >= s.limits.maxRecipients) {
      return s.write(reply(452, '4.5.3', 'Too many recipients'));
    }
    let rcpt;
    try {
      rcpt = await s.service.delivery.resolve(p.address);
    } catch (err) {
      const outcome = s.service.delivery.outcomeOf(err);
      if (outcome === 'tempfail') s.log.warn({ err: err.message, code: err.code }, 'lmtp rcpt');
      return s.write(outcomeReply(outcome, p.address));
    }
    s.tx.rcpts.push(rcpt);
    s.write(reply(250, '2.1.5', 'Ok'));
  },
};
