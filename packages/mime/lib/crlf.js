'use strict';

/*
 * Message bytes as IMAP serves them: every line ended by CRLF (RFC 3501 2.2, 2.3.4: message
 * data is RFC 5322, whose lines end in CRLF; Dovecot, Cyrus and WildDuck serve it so). Most
 * mbox and Maildir mail is stored with bare LF, and is kept so (export stays byte-exact): the
 * conversion happens here, on the way out, and every BODY[] section, partial fetch,
 * RFC822.SIZE and BODYSTRUCTURE size is taken on the converted form. Pure; one pass.
 */

// Lines up to this long are copied in the loop, longer ones with Buffer#copy.
const SHORT_LINE = 128;

/**
 * The bytes with each bare LF (one not preceded by CR) made CRLF; the same Buffer when there
 * is none (mail stored with CRLF costs one scan, no copy).
 * @param {Buffer} raw
 * @param {{own?: boolean}} [opts] own: a converted form gets an allocation of its own, never a
 *   slice of Node's shared pool, so that a cache can keep it as it is (IMAP FETCH)
 * @returns {Buffer}
 */
function toCrlf(raw, opts) {
  const bare = bareLfCount(raw);
  if (!bare) return raw;
  const size = raw.length + bare;
  const out = opts && opts.own ? Buffer.allocUnsafeSlow(size) : Buffer.allocUnsafe(size);
  let o = 0;
  let from = 0;
  for (let nl = raw.indexOf(0x0a); nl >= 0; nl = raw.indexOf(0x0a, nl + 1)) {
    if (nl > 0 && raw[nl - 1] === 0x0d) continue;
    // A mail line is short: copied byte by byte. Buffer#copy makes a view object per call,
    // ~5 KB of garbage per typical message (allocation-sampled FETCH, issue 35).
    if (nl - from < SHORT_LINE) for (let i = from; i < nl; i++) out[o++] = raw[i];
    else o += raw.copy(out, o, from, nl);
    out[o++] = 0x0d;
    out[o++] = 0x0a;
    from = nl + 1;
  }
  raw.copy(out, o, from);
  return out;
}

/**
 * LF bytes not preceded by CR.
 * @param {Buffer} raw
 * @returns {number}
 */
function bareLfCount(raw) {
  let n = 0;
  for (let nl = raw.indexOf(0x0a); nl >= 0; nl = raw.indexOf(0x0a, nl + 1)) {
    if (nl === 0 || raw[nl - 1] !== 0x0d) n++;
  }
  return n;
}

module.exports = { toCrlf, bareLfCount };
