'use strict';

/*
 * Serialises response values (RFC 3501 9 response syntax) into bytes. Pure. Strings that
 * cannot be quoted (CR, LF, NUL, 8-bit, or long) become literals, so no value a message
 * carries can break the response framing.
 *
 * Values: null → NIL; number → digits; string or Buffer → quoted or literal; Atom → as is;
 * Literal → always a literal; array → parenthesised list; Raw → bytes as given.
 */

const { Multi, serializeValue } = require('@mailgate/mime/imap-wire');

/** An atom or preformatted token (flags, `BODY[1]`, keywords). */
class Atom {
  /** @param {string} value */
  constructor(value) {
    this.value = value;
  }
}

/** Forces literal form (message bytes: BODY[] and friends). */
class Literal {
  /** @param {Buffer} value */
  constructor(value) {
    this.value = value;
  }
}

/** @param {string} v */
const atom = (v) => new Atom(v);
/** @param {Buffer|string} v */
const literal = (v) => new Literal(Buffer.isBuffer(v) ? v : Buffer.from(String(v), 'utf8'));

/** The server's own value types, written for @mailgate/mime's serialiser. */
function serverValue(value, out) {
  if (value instanceof Atom) out.push(value.value);
  else if (value instanceof Literal) out.push(`{${value.value.length}}\r\n`, value.value);
  else return false;
  return true;
}

/**
 * Appends the serialisation of value to out (an array of Buffers/strings): the values of
 * @mailgate/mime imap-wire.js (the same serialiser the kept ENVELOPE and BODYSTRUCTURE were
 * written with) plus Atom and Literal.
 * @param {any} value
 * @param {Array<string|Buffer>} out
 */
function serialize(value, out) {
  return serializeValue(value, out, serverValue);
}

/**
 * One response line (untagged `*`, tagged or `+`), serialised: parts are joined by spaces.
 * @param {string} prefix `*`, a tag, or `+`
 * @param {any[]} parts values (see serialize)
 * @returns {Buffer}
 */
function responseLine(prefix, parts) {
  const chunks = responseChunks(prefix, parts);
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
}

/**
 * responseLine as the Buffers to write in order, their concatenation being responseLine's
 * bytes: text runs converted, one Buffer per run, and the Buffers of literals as they are (not
 * copied: a FETCH of a message's bytes writes the very Buffer it read, and a socket corked
 * around the writes sends them in one writev).
 * @param {string} prefix `*`, a tag, or `+`
 * @param {any[]} parts values (see serialize)
 * @returns {Buffer[]}
 */
function responseChunks(prefix, parts) {
  const out = [prefix];
  for (const p of parts) {
    out.push(' ');
    serialize(p, out);
  }
  out.push('\r\n');
  // Text runs are joined before conversion: one Buffer per run, not one per token.
  const chunks = [];
  let text = '';
  for (const x of out) {
    if (Buffer.isBuffer(x)) {
      chunks.push(Buffer.from(text, 'latin1'), x);
      text = '';
    } else text += x;
  }
  chunks.push(Buffer.from(text, 'latin1'));
  return chunks;
}

/**
 * Text for a status response (`OK`, `NO`, `BAD`, `BYE`): CR/LF and 8-bit removed so that
 * user-supplied text (a mailbox name in an error) cannot inject a response line.
 * @param {string} text
 * @returns {string}
 */
function safeText(text) {
  return (
    String(text)
      // eslint-disable-next-line no-control-regex -- CTL bytes are what the check is about
      .replace(/[\r\n\x00-\x1f\x7f-\uffff]+/g, ' ')
      .slice(0, 500)
  );
}

module.exports = {
  Atom,
  Literal,
  Multi,
  atom,
  literal,
  serialize,
  responseLine,
  responseChunks,
  safeText,
};
