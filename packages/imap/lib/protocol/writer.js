'use strict';

/*
 * Serialises response values (RFC 3501 9 response syntax) into bytes. Pure. Strings that
 * cannot be quoted (CR, LF, NUL, 8-bit, or long) become literals, so no value a message
 * carries can break the response framing.
 *
 * Values: null → NIL; number → digits; string or Buffer → quoted or literal; Atom → as is;
 * Literal → always a literal; array → parenthesised list; Raw → bytes as given.
 */

const MAX_QUOTED = 1024;

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

/**
 * A multipart BODYSTRUCTURE: its leading child bodies are written back to back without spaces
 * (RFC 3501 9: body-type-mpart = 1*body SP media-subtype …).
 */
class Multi {
  /** @param {any[]} items child bodies, then subtype and extension data */
  constructor(items) {
    this.items = items;
  }
}

/** @param {string} v */
const atom = (v) => new Atom(v);
/** @param {Buffer|string} v */
const literal = (v) => new Literal(Buffer.isBuffer(v) ? v : Buffer.from(String(v), 'utf8'));

function quotable(buf) {
  if (buf.length > MAX_QUOTED) return false;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

/**
 * Appends the serialisation of value to out (an array of Buffers/strings).
 * @param {any} value
 * @param {Array<string|Buffer>} out
 */
function serialize(value, out) {
  if (value === null || value === undefined) {
    out.push('NIL');
  } else if (typeof value === 'number' || typeof value === 'bigint') {
    out.push(String(value));
  } else if (value instanceof Atom) {
    out.push(value.value);
  } else if (value instanceof Literal) {
    out.push(`{${value.value.length}}\r\n`, value.value);
  } else if (value instanceof Multi) {
    out.push('(');
    let children = true;
    value.items.forEach((v, i) => {
      const body = Array.isArray(v) || v instanceof Multi;
      if (!body) children = false;
      if (i && !(children && body)) out.push(' ');
      serialize(v, out);
    });
    out.push(')');
  } else if (Array.isArray(value)) {
    out.push('(');
    value.forEach((v, i) => {
      if (i) out.push(' ');
      serialize(v, out);
    });
    out.push(')');
  } else {
    const buf = Buffer.isBuffer(value) ? value : Buffer.from(String(value), 'utf8');
    if (quotable(buf)) {
      out.push('"' + buf.toString('latin1').replace(/[\\"]/g, (c) => '\\' + c) + '"');
    } else {
      out.push(`{${buf.length}}\r\n`, buf);
    }
  }
  return out;
}

/**
 * One response line (untagged `*`, tagged or `+`), serialised: parts are joined by spaces.
 * @param {string} prefix `*`, a tag, or `+`
 * @param {any[]} parts values (see serialize)
 * @returns {Buffer}
 */
function responseLine(prefix, parts) {
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
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
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

module.exports = { Atom, Literal, Multi, atom, literal, serialize, responseLine, safeText };
