'use strict';

/*
 * Owns the syntax of LMTP command lines (RFC 2033, RFC 5321 4.1): the verb and, for MAIL and
 * RCPT, the path and its ESMTP parameters. Pure: strings in, objects out; never touches a
 * socket or the store. Throws SyntaxError with a message safe to send.
 */

const MAX_PATH = 512; // RFC 5321 4.5.3.1.3: 256 octets for a path; leave room for source routes
const MAX_PARAMS = 16;

/**
 * @param {string} line a command line without CRLF
 * @returns {{verb: string, rest: string}}
 */
function parseCommand(line) {
  const m = /^([A-Za-z]+)(?: (.*))?$/.exec(line);
  if (!m) return { verb: '', rest: line };
  return { verb: m[1].toUpperCase(), rest: m[2] || '' };
}

/**
 * `FROM:<path> params` / `TO:<path> params`.
 * @param {string} rest the text after MAIL / RCPT
 * @param {'FROM'|'TO'} keyword
 * @returns {{address: string, params: Map<string, string|true>}}
 */
function parsePath(rest, keyword) {
  const re = new RegExp(`^${keyword}:\\s?<`, 'i');
  const head = re.exec(rest);
  if (!head)
    throw new SyntaxError(`Syntax: ${keyword === 'FROM' ? 'MAIL FROM' : 'RCPT TO'}:<address>`);
  let i = head[0].length;
  let address = '';
  let quoted = false;
  for (; i < rest.length; i++) {
    const c = rest[i];
    if (quoted) {
      if (c === '\\' && i + 1 < rest.length) {
        address += c + rest[++i];
        continue;
      }
      if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === '>') break;
    address += c;
    if (address.length > MAX_PATH) throw new SyntaxError('Address too long');
  }
  if (i >= rest.length) throw new SyntaxError('Unterminated address');
  // A source route (`@a,@b:user@c`, RFC 5321 4.1.2) is accepted and ignored.
  if (address.startsWith('@')) address = address.slice(address.indexOf(':') + 1);
  if (/[\s<>\0]/.test(address.replace(/"(?:[^"\\]|\\.)*"/g, ''))) {
    throw new SyntaxError('Invalid address');
  }
  const params = new Map();
  const tail = rest.slice(i + 1).trim();
  if (tail) {
    const items = tail.split(/ +/);
    if (items.length > MAX_PARAMS) throw new SyntaxError('Too many parameters');
    for (const p of items) {
      const eq = p.indexOf('=');
      const key = (eq < 0 ? p : p.slice(0, eq)).toUpperCase();
      if (!/^[A-Z0-9][A-Z0-9-]*$/.test(key)) throw new SyntaxError('Invalid parameter');
      params.set(key, eq < 0 ? true : p.slice(eq + 1));
    }
  }
  return { address, params };
}

module.exports = { parseCommand, parsePath, MAX_PATH };
