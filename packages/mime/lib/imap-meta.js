'use strict';

/*
 * The IMAP metadata of one message, derived from its bytes once, at import or delivery
 * (@mailgate/importer deriveRow, which the import's parse workers and every append run) and
 * kept by the store (`message_imap`): the ENVELOPE, BODY and BODYSTRUCTURE values in wire form,
 * the raw lines of the header fields mail clients put in their message lists, and RFC822.SIZE.
 * A mail client's first sync is then a narrow read with no parsing (issue 35.3). Everything is
 * taken on the message as IMAP serves it, with CRLF line ends (crlf.js), so BODYSTRUCTURE's
 * sizes and line counts and RFC822.SIZE describe the bytes BODY[] sends. Pure.
 */

const { toCrlf } = require('./crlf');
const { parseTree } = require('./tree');
const { describe } = require('./structure');
const { wireText } = require('./imap-wire');

/**
 * Header fields kept as raw lines: what Thunderbird, Apple Mail, mutt, K-9 and Outlook ask for
 * in their list views (BODY.PEEK[HEADER.FIELDS (…)]). A request naming only these is answered
 * from the kept lines; any other name reads the message.
 */
const FIELDS = new Set([
  'date',
  'from',
  'sender',
  'reply-to',
  'to',
  'cc',
  'bcc',
  'subject',
  'message-id',
  'in-reply-to',
  'references',
  'content-type',
  'priority',
  'x-priority',
  'importance',
  'newsgroups',
  'list-id',
  'list-post',
]);

/**
 * @typedef {object} ImapMeta
 * @property {string} envelope ENVELOPE in wire form (latin1: one char per byte)
 * @property {string} body BODY (non-extensible BODYSTRUCTURE) in wire form
 * @property {string} bodystructure BODYSTRUCTURE in wire form
 * @property {string} fields the raw lines (folding kept, CRLF) of the FIELDS the header has
 * @property {number} size RFC822.SIZE: the length of the CRLF form
 */

/**
 * The IMAP metadata of a message.
 * @param {Buffer} raw the stored bytes
 * @returns {ImapMeta}
 */
function deriveMeta(raw) {
  const served = toCrlf(raw);
  // One tree for both: the structure and the kept lines read the same header.
  const tree = parseTree(served);
  const d = describe(served, tree);
  return {
    envelope: wireText(d.envelope),
    body: wireText(d.body),
    bodystructure: wireText(d.bodystructure),
    fields: tree.fields
      .filter((f) => FIELDS.has(f.key))
      .map((f) => f.line)
      .join(''),
    size: served.length,
  };
}

/**
 * Whether metadata holds a NUL byte (PostgreSQL text cannot keep it: such a message's
 * metadata is derived on the spot when it is served).
 * @param {ImapMeta} m
 */
function hasNul(m) {
  return (
    m.envelope.includes('\0') ||
    m.body.includes('\0') ||
    m.bodystructure.includes('\0') ||
    m.fields.includes('\0')
  );
}

/**
 * HEADER.FIELDS of the top-level message from kept lines: the lines whose field name is in
 * `names`, in order, then the blank line (RFC 3501 6.4.5), as latin1 text. One pass with
 * indexOf over the kept text, no split and no regular expression, and a line's name compared
 * in place (namedIn): a list view asks this of every message of the mailbox, ~8 lines each, and
 * a string made per line (slice, trim, lower case) was most of its cost in a new process.
 * @param {string} fields kept lines (CRLF, folding kept)
 * @param {Set<string>} names lower-cased field names
 * @returns {string}
 */
function pickFields(fields, names) {
  const table = byLength(names);
  let out = '';
  let keep = false;
  let i = 0;
  const n = fields.length;
  while (i < n) {
    let nl = fields.indexOf('\n', i);
    if (nl < 0) nl = n - 1;
    const c = fields.charCodeAt(i);
    if (c === 0x20 || c === 0x09) {
      // A folded continuation belongs to the field before it.
      if (keep) out += fields.slice(i, nl + 1);
    } else {
      const colon = fields.indexOf(':', i);
      keep = colon > i && colon < nl && namedIn(fields, i, colon, table, names);
      if (keep) out += fields.slice(i, nl + 1);
    }
    i = nl + 1;
  }
  // Kept lines are CRLF already (taken on the served form), so the section is CRLF throughout
  // (RFC 3501 2.2) without a rewrite.
  return out + '\r\n';
}

/**
 * pickFields as ranges of a larger text, for a writer that copies them (the IMAP server's packed
 * list view, issue 35.3): the lines of text[start, end) whose field name is in `names`, with
 * their folded continuations, as [from, to) pairs pushed onto `out` (emptied first); returns the
 * section's length, the blank line ("\r\n") that ends it included. The ranges joined, then
 * "\r\n", are pickFields(text.slice(start, end), names): no string is made per message or line.
 * @param {string} text kept lines of many messages (latin1 text)
 * @param {number} start first character of one message's kept lines
 * @param {number} end past its last character
 * @param {Set<string>} names lower-cased field names
 * @param {number[]} out filled with from, to, from, to, …
 * @returns {number} characters of the section
 */
function fieldRanges(text, start, end, names, out) {
  const table = byLength(names);
  out.length = 0;
  let len = 2;
  let keep = false;
  let i = start;
  while (i < end) {
    let nl = text.indexOf('\n', i);
    if (nl < 0 || nl >= end) nl = end - 1;
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09) {
      const colon = text.indexOf(':', i);
      keep = colon > i && colon < nl && namedIn(text, i, colon, table, names);
    }
    if (keep) {
      const last = out.length - 1;
      // A kept line right after a kept one extends its range.
      if (last > 0 && out[last] === i) out[last] = nl + 1;
      else out.push(i, nl + 1);
      len += nl + 1 - i;
    }
    i = nl + 1;
  }
  return len;
}

// Per set of names (a FETCH's, asked of every message): its names by length.
const lengths = new WeakMap();
function byLength(names) {
  let t = lengths.get(names);
  if (!t) {
    t = new Map();
    for (const name of names) t.set(name.length, [...(t.get(name.length) || []), name]);
    lengths.set(names, t);
  }
  return t;
}

/**
 * Whether the field name fields[i, colon) is one of `names` (lower case), compared without
 * making a string: ASCII letters folded to lower case, anything else as is. A name with
 * blanks before its colon takes the general way (trim, lower case).
 */
function namedIn(fields, i, colon, table, names) {
  const before = fields.charCodeAt(colon - 1);
  if (before === 0x20 || before === 0x09) {
    return names.has(fields.slice(i, colon).trim().toLowerCase());
  }
  const same = table.get(colon - i);
  if (!same) return false;
  next: for (const name of same) {
    for (let k = 0; k < name.length; k++) {
      let c = fields.charCodeAt(i + k);
      if (c >= 0x41 && c <= 0x5a) c |= 0x20;
      if (c !== name.charCodeAt(k)) continue next;
    }
    return true;
  }
  return false;
}

module.exports = { FIELDS, deriveMeta, hasNul, pickFields, fieldRanges };
