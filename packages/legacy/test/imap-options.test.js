'use strict';

const { flowOptions } = require('../lib/imap');

// imapflow options from an upstream account (upstreamSecurity of @mailgate/core): STARTTLS is
// required by default (doSTARTTLS true: no plaintext fallback); tls:false of old entries is
// plaintext.
test('imapflow options: STARTTLS required by default, never for tls or plaintext', () => {
  const base = { host: 'h', port: 143, login: 'l', password: 'p' };
  expect(flowOptions(base)).toMatchObject({ secure: false, doSTARTTLS: true });
  expect(flowOptions({ ...base, tls: false })).toMatchObject({ secure: false, doSTARTTLS: false });
  expect(flowOptions({ ...base, security: 'plaintext' })).toMatchObject({ doSTARTTLS: false });
  const implicit = flowOptions({ ...base, security: 'tls' });
  expect(implicit.secure).toBe(true);
  expect(implicit.doSTARTTLS).toBeUndefined();
});
