'use strict';

// STARTTLS (RFC 3501 6.2.1). Bytes the client pipelined after STARTTLS are dropped, not
// interpreted inside TLS (the CVE-2011-0411 class of plaintext injection).
const tls = require('node:tls');
const { arity } = require('../protocol/args');
const { bad } = require('../errors');

module.exports = {
  name: 'STARTTLS',
  states: ['notauth'],
  sync: false,
  async run(s, cmd) {
    arity(cmd, 0);
    if (!s.server.tlsContext) throw bad('STARTTLS not available');
    if (s.secure) throw bad('TLS already active');
    const plain = s.socket;
    s.tagged(cmd.tag, 'OK', 'Begin TLS negotiation now');
    plain.off('data', s.onData);
    plain.removeAllListeners('close');
    s.queue.length = 0;
    s.framer = new (require('../protocol/framer').CommandFramer)(s.framerLimits());
    const secure = new tls.TLSSocket(plain, { isServer: true, secureContext: s.server.tlsContext });
    s.secure = true;
    secure.on('secure', () => s.log.debug('tls established'));
    s.attach(secure);
    return { answered: true };
  },
};
