'use strict';

const { upstreamSecurity } = require('../lib');

// The one rule for upstream IMAP connections: STARTTLS (required) unless an entry says
// otherwise; entries written before `security` existed keep their meaning.
describe('upstreamSecurity', () => {
  test('no setting is starttls; security wins over the old tls boolean', () => {
    expect(upstreamSecurity({})).toBe('starttls');
    expect(upstreamSecurity({ tls: true })).toBe('tls');
    expect(upstreamSecurity({ tls: false })).toBe('plaintext');
    expect(upstreamSecurity({ tls: false, security: 'starttls' })).toBe('starttls');
    expect(upstreamSecurity({ security: 'plaintext' })).toBe('plaintext');
    expect(() => upstreamSecurity({ security: 'maybe' })).toThrow(/unknown upstream security/);
  });
});
