'use strict';

/*
 * IMAP response values in wire form (RFC 3501 9): NIL, numbers, quoted strings or literals,
 * parenthesised lists, and BODYSTRUCTURE's multipart bodies written back to back. The one
 * serialiser of these values: the ENVELOPE and BODYSTRUCTURE derived at import
 * (imap-meta.js) and every response the IMAP server writes (@mailgate/imap
 * protocol/writer.js, which adds its atoms and forced literals through `other`) use it, so a
 * kept value and a value written on the spot are the same bytes. Pure; never does I/O.
 */

const MAX_QUOTED = 1024;

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

/**
 * Whether bytes can be sent as a quoted string: printable ASCII only and not long. Anything
 * else (CR, LF, NUL, 8-bit) becomes a literal, so no value a message carries can break the
 * response framing.
 * @param {Buffer} buf
 */
function quotable(buf) {
  if (buf.length > MAX_QUOTED) return false;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

/**
 * Appends the serialisation of value to out (Buffers and latin1 strings). null → NIL;
 * number → digits; string or Buffer → quoted or literal; Multi and array → lists. Any other
 * object goes to `other(value, out)` (the IMAP server's atoms and literals).
 * @param {any} value
 * @param {Array<string|Buffer>} out
 * @param {(value: any, out: Array<string|Buffer>) => boolean} [other] true when it wrote value
 * @returns {Array<string|Buffer>} out
 */
function serializeValue(value, out, other) {
  if (value === null || value === undefined) {
    out.push('NIL');
  } else if (typeof value === 'number' || typeof value === 'bigint') {
    out.push(String(value));
  } else if (other && typeof value === 'object' && !Buffer.isBuffer(value) && other(value, out)) {
    // written by the caller's hook
  } else if (value instanceof Multi) {
    out.push('(');
    let children = true;
    value.items.forEach((v, i) => {
      const body = Array.isArray(v) || v instanceof Multi;
      if (!body) children = false;
      if (i && !(children && body)) out.push(' ');
      serializeValue(v, out, other);
    });
    out.push(')');
  } else if (Array.isArray(value)) {
    out.push('(');
    value.forEach((v, i) => {
      if (i) out.push(' ');
      serializeValue(v, out, other);
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
 * A value as wire text (latin1: one char per byte), as kept by the store.
 * @param {any} value
 * @returns {string}
 */
function wireText(value) {
  return serializeValue(value, [])
    .map((x) => (Buffer.isBuffer(x) ? x.toString('latin1') : x))
    .join('');
}

module.exports = { Multi, quotable, serializeValue, wireText };
