'use strict';

/*
 * Turns one framed command (see framer.js) into `{tag, name, args}` tokens (RFC 3501 9,
 * formal syntax). Pure: no I/O, no knowledge of what a command means. Bounded: nesting depth
 * and token count are capped so that a hostile command is a ParseError, never a stack
 * overflow or a huge allocation.
 *
 * Tokens: `{type: 'atom', value}` (ASCII; also `BODY[HEADER.FIELDS (A B)]<0.100>`, whose
 * bracketed part may hold spaces and parentheses), `{type: 'string', value}` (quoted, UTF-8
 * decoded), `{type: 'literal', value: Buffer}`, `{type: 'list', value: Token[]}`.
 */

const MAX_DEPTH = 32;
const MAX_TOKENS = 100000;
const LITERAL_RE = /\{(\d{1,20})(\+?)\}$/;

class ParseError extends Error {
  /**
   * @param {string} message text for the client's tagged BAD
   * @param {string} [tag]
   */
  constructor(message, tag = '*') {
    super(message);
    this.name = 'ParseError';
    this.tag = tag;
  }
}

// RFC 3501 atom-char: any CHAR except atom-specials ( ) { SP CTL list-wildcards quoted-specials
// resp-specials. We accept list wildcards (% *) and ']' in atoms, as LIST patterns, sequence
// sets, flags and mailbox names (ASTRING-CHAR) use them, and 8-bit bytes (lenient, as most
// servers). '[' is an ordinary atom-char too; it opens a section only after a FETCH item name.
function isAtomChar(c) {
  return c > 0x20 && c !== 0x7f && c !== 0x28 && c !== 0x29 && c !== 0x7b && c !== 0x22;
}

// Tag: astring chars except '+' (RFC 3501 9: tag = 1*<any ASTRING-CHAR except "+">).
function isTagChar(c) {
  return isAtomChar(c) && c !== 0x2b && c !== 0x5c && c !== 0x25 && c !== 0x2a && c < 0x80;
}

/**
 * @param {Array<string|Buffer>} parts a framed command
 * @returns {{tag: string, name: string, args: object[]}} name is upper-cased
 * @throws {ParseError}
 */
function parseCommand(parts) {
  const segs = [];
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i];
    if (Buffer.isBuffer(p)) {
      segs.push({ literal: p });
      continue;
    }
    // Every text part but the last announced the literal that follows it.
    segs.push({ text: i < parts.length - 1 && LITERAL_RE.test(p) ? p.replace(LITERAL_RE, '') : p });
  }
  const first = segs[0] && segs[0].text !== undefined ? segs[0].text : '';
  let i = 0;
  while (i < first.length && isTagChar(first.charCodeAt(i))) i++;
  const tag = first.slice(0, i);
  if (!tag) throw new ParseError('Missing or invalid tag');
  if (first[i] !== ' ') throw new ParseError('Missing command', tag);
  i++;
  let j = i;
  while (j < first.length && isAtomChar(first.charCodeAt(j)) && first[j] !== '[') j++;
  const name = first.slice(i, j).toUpperCase();
  if (!name) throw new ParseError('Missing command', tag);
  const cur = { segs, si: 0, pos: j, tokens: 0, tag };
  const args = readList(cur, 0, false);
  return { tag, name, args };
}

function readList(cur, depth, nested) {
  if (depth > MAX_DEPTH) throw new ParseError('Too deeply nested', cur.tag);
  const out = [];
  for (;;) {
    const seg = cur.segs[cur.si];
    if (!seg) {
      if (nested) throw new ParseError('Unterminated list', cur.tag);
      return out;
    }
    if (seg.literal) {
      out.push(count(cur, { type: 'literal', value: seg.literal }));
      cur.si++;
      cur.pos = 0;
      continue;
    }
    const s = seg.text;
    if (cur.pos >= s.length) {
      cur.si++;
      cur.pos = 0;
      continue;
    }
    const c = s.charCodeAt(cur.pos);
    if (c === 0x20) {
      cur.pos++;
      continue;
    }
    if (c === 0x29) {
      if (!nested) throw new ParseError('Unexpected )', cur.tag);
      cur.pos++;
      return out;
    }
    if (c === 0x28) {
      cur.pos++;
      out.push(count(cur, { type: 'list', value: readList(cur, depth + 1, true) }));
      continue;
    }
    if (c === 0x22) {
      out.push(count(cur, readQuoted(cur, s)));
      continue;
    }
    if (c === 0x7b) throw new ParseError('Invalid literal', cur.tag);
    if (!isAtomChar(c)) throw new ParseError('Invalid character in command', cur.tag);
    out.push(count(cur, readAtom(cur, s)));
  }
}

function count(cur, token) {
  if (++cur.tokens > MAX_TOKENS) throw new ParseError('Too many arguments', cur.tag);
  return token;
}

function readQuoted(cur, s) {
  let i = cur.pos + 1;
  const bytes = [];
  for (;;) {
    if (i >= s.length) throw new ParseError('Unterminated quoted string', cur.tag);
    const ch = s.charCodeAt(i);
    if (ch === 0x22) break;
    if (ch === 0x5c) {
      const next = s.charCodeAt(i + 1);
      // RFC 3501 9: only \" and \\ are quoted-specials escapes.
      if (next !== 0x22 && next !== 0x5c)
        throw new ParseError('Invalid escape in quoted string', cur.tag);
      bytes.push(next);
      i += 2;
      continue;
    }
    if (ch === 0) throw new ParseError('NUL in quoted string', cur.tag);
    bytes.push(ch);
    i++;
  }
  cur.pos = i + 1;
  return { type: 'string', value: Buffer.from(bytes).toString('utf8') };
}

// FETCH items whose '[' opens a section (RFC 3501 6.4.5, RFC 3516): inside it spaces and
// parentheses belong to the atom. Anywhere else '[' and ']' are plain atom characters, so
// `SELECT a[b]` names a mailbox (issue 28 item 9: it answered `BAD Unterminated [`).
const SECTION_ITEM = /^(?:BODY|BODY\.PEEK|BINARY|BINARY\.PEEK|BINARY\.SIZE)$/i;

function readAtom(cur, s) {
  let i = cur.pos;
  let bracket = 0;
  while (i < s.length) {
    const ch = s.charCodeAt(i);
    if (bracket > 0) {
      // Inside a FETCH section spec: spaces and parentheses belong to the atom.
      if (ch === 0x5b) bracket++;
      else if (ch === 0x5d) bracket--;
      else if (ch < 0x20 || ch === 0x7f)
        throw new ParseError('Invalid character in section', cur.tag);
      i++;
      continue;
    }
    if (ch === 0x5b && SECTION_ITEM.test(s.slice(cur.pos, i))) {
      bracket++;
      i++;
      continue;
    }
    if (!isAtomChar(ch)) break;
    i++;
  }
  if (bracket > 0) throw new ParseError('Unterminated [', cur.tag);
  const value = s.slice(cur.pos, i);
  cur.pos = i;
  return { type: 'atom', value };
}

/**
 * Text value of an astring/nstring token (atom, quoted string or literal), or null.
 * @param {object} token
 * @returns {string|null}
 */
function stringOf(token) {
  if (!token) return null;
  // Atoms hold raw bytes as latin1; 8-bit ones are taken as UTF-8 (mailbox names, RFC 6855).
  if (token.type === 'atom') return Buffer.from(token.value, 'latin1').toString('utf8');
  if (token.type === 'string') return token.value;
  if (token.type === 'literal') return token.value.toString('utf8');
  return null;
}

module.exports = { parseCommand, ParseError, stringOf, MAX_DEPTH };
