'use strict';

const { isUtf8 } = require('node:buffer');
const iconv = require('iconv-lite');
// libmime's charset module: alias table (normalizeCharset) and the encoding-japanese path for
// ISO-2022-JP, which iconv-lite does not implement. Pinned libmime version, internal path.
const libcharset = require('libmime/lib/charset');

const FALLBACK = 'windows-1252';

/** Resolved decoder per declared charset label, so the alias work happens once per label. */
const resolved = new Map();

/**
 * Maps a declared charset label to how we decode it.
 * - 'utf8': UTF-8 (and US-ASCII, a subset); invalid bytes fall back to windows-1252 because
 *   mislabelled 8-bit mail ("us-ascii" carrying Latin-1) is far more common than real UTF-8
 *   corruption.
 * - 'cp1252': ISO-8859-1 is decoded as windows-1252 (what the WHATWG Encoding standard and
 *   every mail client do: 0x80-0x9F are C1 controls in Latin-1 but smart quotes in practice).
 * - 'japanese': libmime + encoding-japanese (ISO-2022-JP, which iconv-lite lacks).
 * - any other name iconv-lite knows.
 * - unknown/bogus labels: treated like 'unknown', i.e. UTF-8 if valid, else windows-1252.
 *
 * @param {string} label
 * @returns {string}
 */
function resolveCharset(label) {
  let r = resolved.get(label);
  if (r !== undefined) return r;
  let name = String(label || '')
    .trim()
    .replace(/^["']|["']$/g, '')
    .toLowerCase();
  // RFC 2231 section 5: charset*language
  const star = name.indexOf('*');
  if (star >= 0) name = name.slice(0, star);
  if (!name || name === 'unknown' || name === 'unknown-8bit' || name === 'x-unknown') {
    r = 'unknown';
  } else if (/^(?:us-?ascii|ascii|utf-?8|ansi_x3\.4-1968|7bit|8bit|default)$/.test(name)) {
    r = 'utf8';
  } else if (/^(?:iso[-_ ]?8859[-_ ]?1|latin-?1|l1|iso_8859-1:1987|cp819|ibm819)$/.test(name)) {
    r = 'cp1252';
  } else if (/^(?:jis|iso-?2022-?jp|eucjp|euc-jp)/.test(name)) {
    r = 'japanese';
  } else {
    let norm;
    try {
      norm = libcharset.normalizeCharset(name);
    } catch {
      norm = name;
    }
    if (/^windows-1252$/i.test(norm)) r = 'cp1252';
    else if (/^utf-8$/i.test(norm)) r = 'utf8';
    else if (iconv.encodingExists(norm)) r = norm;
    else if (iconv.encodingExists(name)) r = name;
    else r = 'unknown';
  }
  if (resolved.size > 1000) resolved.clear(); // bogus labels must not grow this forever
  resolved.set(label, r);
  return r;
}

/** True when every byte is < 0x80 (fast path: ASCII decodes identically everywhere). */
function isAscii(buf) {
  for (let i = 0; i < buf.length; i++) if (buf[i] > 0x7f) return false;
  return true;
}

/**
 * Decodes bytes in the given charset to a JS string. Never throws.
 *
 * @param {Buffer} buf
 * @param {string} [label] declared charset; missing/unknown → UTF-8 if valid, else windows-1252
 * @returns {string}
 */
function decodeBytes(buf, label) {
  if (buf.length === 0) return '';
  const cs = resolveCharset(label || '');
  if (cs === 'utf8' || cs === 'unknown') {
    if (isUtf8(buf)) return buf.toString('utf8');
    return iconv.decode(buf, FALLBACK);
  }
  if (cs === 'cp1252') return iconv.decode(buf, FALLBACK);
  try {
    if (cs === 'japanese') {
      const out = libcharset.decode(buf, label);
      return typeof out === 'string' ? out : Buffer.from(out).toString('utf8');
    }
    return iconv.decode(buf, cs);
  } catch {
    return isUtf8(buf) ? buf.toString('utf8') : iconv.decode(buf, FALLBACK);
  }
}

/**
 * Header bytes without RFC 2047 encoding (RFC 6532 allows UTF-8; older mailers sent raw
 * Latin-1/cp1252): UTF-8 when valid, else windows-1252.
 *
 * @param {Buffer} buf
 * @returns {string}
 */
function decode8bit(buf) {
  return isUtf8(buf) ? buf.toString('utf8') : iconv.decode(buf, FALLBACK);
}

/**
 * Makes a string safe for a PostgreSQL text column: drops NUL (text cannot hold \0) and
 * replaces lone surrogates (they would not survive UTF-8 encoding).
 *
 * @param {string} s
 * @returns {string}
 */
function cleanText(s) {
  if (s.indexOf('\0') !== -1) s = s.replace(/\0/g, '');
  return s.isWellFormed() ? s : s.toWellFormed();
}

module.exports = { decodeBytes, decode8bit, cleanText, resolveCharset, isAscii };
