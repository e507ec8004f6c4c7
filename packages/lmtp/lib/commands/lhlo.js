'use strict';

// LHLO (RFC 2033 4.1): greets the client and lists the extensions; a new LHLO resets the
// transaction. HELO and EHLO are SMTP's and are refused (lmtp.js in commands/index.js).
const { reply } = require('../protocol/replies');

module.exports = {
  name: 'LHLO',
  needsLhlo: false,
  async run(s, rest) {
    if (!rest.trim()) return s.write(reply(501, '5.5.4', 'Syntax: LHLO hostname'));
    s.lhlo = true;
    s.resetTransaction();
    const ext = ['PIPELINING', 'ENHANCEDSTATUSCODES', '8BITMIME', `SIZE ${s.limits.maxMessage}`];
    ext.push('CHUNKING');
    if (s.server.tlsContext && !s.secure) ext.push('STARTTLS');
    s.write(reply(250, null, [s.server.hostname, ...ext]));
  },
};
