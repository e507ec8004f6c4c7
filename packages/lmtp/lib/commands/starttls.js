'use strict';

// STARTTLS (RFC 3207): offered when a certificate is configured; after the handshake the
// session starts over (a new LHLO is needed) and bytes sent before it are dropped.
const { reply } = require('../protocol/replies');

module.exports = {
  name: 'STARTTLS',
  needsLhlo: false,
  async run(s, rest) {
    if (rest) return s.write(reply(501, '5.5.4', 'Syntax: STARTTLS'));
    if (!s.server.tlsContext) return s.write(reply(502, '5.5.1', 'STARTTLS not available'));
    if (s.secure) return s.write(reply(503, '5.5.1', 'TLS already active'));
    s.write(reply(220, '2.0.0', 'Ready to start TLS'));
    s.startTls();
  },
};
