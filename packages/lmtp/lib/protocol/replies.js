'use strict';

/*
 * Owns the text of every LMTP reply: `code enhanced text` lines (RFC 5321 4.2, enhanced status
 * codes RFC 3463 / RFC 2034) and multi-line replies. Pure; the one place reply codes are
 * chosen for outcomes of a delivery, so the LMTP commands never spell a code of their own for
 * them. Reply text never carries internal error text.
 */

/**
 * One reply, possibly multi-line (`250-a`, `250 b`).
 * @param {number} code
 * @param {string|null} enhanced e.g. `2.1.0` (null: none, as in the greeting and LHLO)
 * @param {string|string[]} text
 * @returns {string}
 */
function reply(code, enhanced, text) {
  const lines = Array.isArray(text) ? text : [text];
  return lines
    .map((t, i) => {
      const sep = i === lines.length - 1 ? ' ' : '-';
      const clean = String(t).replace(/[\r\n\0]/g, ' ');
      return `${code}${sep}${enhanced ? `${enhanced} ` : ''}${clean}\r\n`;
    })
    .join('');
}

/**
 * The reply for a recipient after DATA (or at RCPT) by delivery outcome (@mailgate/service
 * deliveryOutcome): 250 only for `stored`, which the caller says after the commit.
 * @param {'stored'|'nouser'|'migrating'|'toobig'|'dataerr'|'tempfail'|'relayfail'|'busy'} outcome
 * @param {string} address the recipient
 * @returns {string}
 */
function outcomeReply(outcome, address) {
  const a = `<${String(address).replace(/[<>\r\n\0]/g, '')}>`;
  switch (outcome) {
    case 'stored':
      return reply(250, '2.0.0', `${a} Saved`);
    case 'nouser':
      return reply(550, '5.1.1', `${a} User doesn't exist`);
    case 'migrating':
      // RFC 3463 X.2.1 "mailbox disabled, not accepting messages", temporary: the account is
      // being migrated; the MTA keeps the mail and delivers it here after the cutover.
      return reply(451, '4.2.1', `${a} Mailbox is being migrated; try again later`);
    case 'toobig':
      return reply(552, '5.3.4', 'Message too big');
    case 'dataerr':
      return reply(554, '5.6.0', `${a} Message refused`);
    case 'relayfail':
      // RFC 3463 X.4.1 "no answer from host": the proxied user's old server did not answer.
      return reply(451, '4.4.1', `${a} Upstream server not answering; try again later`);
    case 'busy':
      // RFC 3463 X.3.2 "system not accepting network messages": every relay slot is taken.
      return reply(451, '4.3.2', `${a} Too many relays in flight; try again later`);
    default:
      return reply(451, '4.3.0', `${a} Temporary failure; try again later`);
  }
}

/**
 * The reply for a recipient whose message was relayed to their old server (a user on `proxy`):
 * the upstream's own code and enhanced code, so 250 only when the upstream said 250 and its
 * 4xx or 5xx as given; its text after ours (control characters removed by reply()).
 * @param {{code: number, enhanced: string|null, text: string}} r the upstream's reply
 * @param {string} address the recipient
 * @returns {string}
 */
function relayedReply(r, address) {
  const a = `<${String(address).replace(/[<>\r\n\0]/g, '')}>`;
  const enhanced = r.enhanced || `${String(r.code)[0]}.0.0`;
  return reply(r.code, enhanced, `${a} Relayed upstream: ${r.text}`);
}

module.exports = { reply, outcomeReply, relayedReply };
