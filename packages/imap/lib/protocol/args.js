'use strict';

/*
 * Argument checks shared by command modules: each returns the value or throws a BAD, so a
 * command with missing, extra or mistyped arguments is answered, never half-executed.
 */

const { canonicalMailboxName } = require('@mailgate/core');
const { bad, no } = require('../errors');
const { stringOf } = require('./parser');

/** Exactly n arguments (or between n and max). */
function arity(cmd, n, max = n) {
  if (cmd.args.length < n || cmd.args.length > max)
    throw bad(`Wrong number of arguments to ${cmd.name}`);
}

/** astring argument (atom, quoted or literal) → string. */
function astring(token, what = 'argument') {
  const s = token && token.type !== 'list' ? stringOf(token) : null;
  if (s === null) throw bad(`Invalid ${what}`);
  if (s.includes('\0')) throw bad(`NUL in ${what}`);
  return s;
}

/** atom argument → upper-cased string. */
function atomArg(token, what = 'argument') {
  if (!token || token.type !== 'atom') throw bad(`Invalid ${what}`);
  return token.value.toUpperCase();
}

/** list argument → tokens. */
function listArg(token, what = 'list') {
  if (!token || token.type !== 'list') throw bad(`Invalid ${what}`);
  return token.value;
}

/** Number argument (RFC 3501 number: 32-bit; mod-sequence values up to 2^63-1). */
function numberArg(token, what = 'number', max = 4294967295) {
  if (!token || token.type !== 'atom' || !/^\d{1,20}$/.test(token.value))
    throw bad(`Invalid ${what}`);
  const n = Number(token.value);
  if (!Number.isSafeInteger(n) || n > max) throw bad(`Invalid ${what}`);
  return n;
}

/**
 * Mailbox name: `INBOX` in any case is INBOX (RFC 3501 5.1), and so is the first level of its
 * inferiors (`inbox/x`), as the store keeps names (core canonicalMailboxName): otherwise
 * `SELECT inbox/x` then `DELETE INBOX/x` passed the in-use check. Modified UTF-7 (RFC 3501
 * 5.1.3) is decoded; an 8-bit name is taken as UTF-8.
 */
function mailboxArg(token) {
  const name = astring(token, 'mailbox name');
  // A name that is well-formed syntax but not a valid mailbox name is NO, never BAD: clients
  // drop the connection on BAD (issue 28 item 9), and Dovecot answers NO too.
  if (name.length > 1000) throw no('Mailbox name too long', 'CANNOT');
  if (!validUtf7(name)) throw no('Mailbox name is not valid modified UTF-7', 'CANNOT');
  return canonicalMailboxName(decodeUtf7(name));
}

/** Every `&` of a name starts `&-` or a modified-BASE64 run ended by `-` (RFC 3501 5.1.3). */
function validUtf7(name) {
  return /^(?:[^&]|&-|&[A-Za-z0-9+,]+-)*$/.test(name);
}

/** Modified UTF-7 (RFC 3501 5.1.3) → UTF-16 string; names without `&` pass unchanged. */
function decodeUtf7(name) {
  if (!name.includes('&')) return name;
  return name.replace(/&([^-]*)-/g, (m, b64) => {
    if (b64 === '') return '&';
    const buf = Buffer.from(b64.replace(/,/g, '/'), 'base64');
    let out = '';
    for (let i = 0; i + 1 < buf.length; i += 2) out += String.fromCharCode(buf.readUInt16BE(i));
    return out;
  });
}

/** UTF-16 string → modified UTF-7 for LIST/LSUB/STATUS output (RFC 3501 5.1.3). */
function encodeUtf7(name) {
  return name.replace(/&|[^\x20-\x7e]+/g, (m) => {
    if (m === '&') return '&-';
    const buf = Buffer.alloc(m.length * 2);
    for (let i = 0; i < m.length; i++) buf.writeUInt16BE(m.charCodeAt(i), i * 2);
    return '&' + buf.toString('base64').replace(/=+$/, '').replace(/\//g, ',') + '-';
  });
}

/** Flag list argument: `(\Seen $Label)` or a single flag atom. */
function flagsArg(token) {
  const list = token && token.type === 'list' ? token.value : [token];
  return list.map((t) => {
    if (!t || t.type !== 'atom') throw bad('Invalid flag');
    const f = t.value;
    if (f.startsWith('\\')) {
      const sys = SYSTEM_FLAGS.find((x) => x.toLowerCase() === f.toLowerCase());
      if (!sys) throw bad(`Invalid system flag ${f}`);
      return sys;
    }
    // eslint-disable-next-line no-control-regex -- CTL bytes are what the check is about
    if (!/^[^\s(){%*"\\\]\x00-\x1f\x7f-\xff]+$/.test(f)) throw bad('Invalid keyword');
    return f;
  });
}

const SYSTEM_FLAGS = ['\\Seen', '\\Answered', '\\Flagged', '\\Deleted', '\\Draft', '\\Recent'];

module.exports = {
  arity,
  astring,
  atomArg,
  listArg,
  numberArg,
  mailboxArg,
  flagsArg,
  encodeUtf7,
  decodeUtf7,
  SYSTEM_FLAGS,
};
