'use strict';

/*
 * How mailgate talks to an upstream IMAP server (migration proxy, `import imap`, `migrate`'s
 * verify, the legacy IMAP backend): one rule for all of them.
 *   tls        implicit TLS from the first byte (IMAPS, port 993)
 *   starttls   the default: STARTTLS (RFC 3501 6.2.1) is REQUIRED; an upstream that does not
 *              offer it, or refuses it, fails with UPSTREAM_TLS_REQUIRED. There is no silent
 *              plaintext fallback: that is exactly what a downgrade attack (stripping STARTTLS
 *              from the capability list) relies on, and the password goes over this connection.
 *   plaintext  explicit opt-in (`--imap-plaintext`), e.g. a Dovecot on loopback without TLS
 * Entries written before the setting existed carry `tls: true|false`; `tls: false` was
 * written for "no implicit TLS" and has always meant plaintext in practice, so it keeps that
 * meaning. An entry with neither field is `starttls`.
 */

const SECURITY = ['tls', 'starttls', 'plaintext'];

/**
 * The security of an upstream account entry.
 * @param {{security?: string, tls?: boolean}} acct
 * @returns {'tls'|'starttls'|'plaintext'}
 */
function upstreamSecurity(acct) {
  const s = acct && acct.security;
  if (s !== undefined && s !== null) {
    if (!SECURITY.includes(s)) throw new TypeError(`unknown upstream security ${s}`);
    return s;
  }
  if (acct && acct.tls === true) return 'tls';
  if (acct && acct.tls === false) return 'plaintext';
  return 'starttls';
}

module.exports = { upstreamSecurity, UPSTREAM_SECURITY: SECURITY };
