'use strict';

const { makeFromLine } = require('./from-line');
const { headerEndOffsets, parseHeaderFields } = require('./flags');

const VARIANTS = ['mboxo', 'mboxrd', 'mboxcl', 'mboxcl2'];
const FROM_SPACE = Buffer.from('From ', 'latin1');
const GT = Buffer.from('>');
const LF = Buffer.from('\n');

function startsWithFrom(buf, at) {
  return (
    at + 5 <= buf.length &&
    buf[at] === 0x46 &&
    buf[at + 1] === 0x72 &&
    buf[at + 2] === 0x6f &&
    buf[at + 3] === 0x6d &&
    buf[at + 4] === 0x20
  );
}

function checkVariant(variant) {
  if (!VARIANTS.includes(variant)) throw new TypeError(`unknown mbox variant: ${variant}`);
}

/**
 * Position just after the run of '>' a line starts with, when the line is an escaped or escapable
 * From_ line under the variant's quoting rule; -1 otherwise.
 * mboxo/mboxcl quote only "From " (so ">From " is ambiguous: that is why mboxo is lossy);
 * mboxrd quotes "^>*From " so every level can be undone.
 */
function quotedFromDepth(buf, pos, rd) {
  let j = pos;
  if (rd) while (j < buf.length && buf[j] === 0x3e) j++;
  else if (buf[j] === 0x3e) j++;
  return startsWithFrom(buf, j) ? j - pos : -1;
}

function eachLineStart(buf, fn) {
  let pos = 0;
  while (pos < buf.length) {
    fn(pos);
    const nl = buf.indexOf(0x0a, pos);
    if (nl < 0) break;
    pos = nl + 1;
  }
}

/**
 * Undo From_ quoting: mboxo/mboxcl `>From ` → `From `; mboxrd `>{n}From ` → `>{n-1}From `;
 * mboxcl2 is never quoted.
 * @param {Buffer} buf the message as stored in the file
 * @param {string} variant
 * @returns {Buffer} a new buffer
 */
function unescapeMessage(buf, variant) {
  checkVariant(variant);
  if (variant === 'mboxcl2') return Buffer.from(buf);
  const rd = variant === 'mboxrd';
  const parts = [];
  let last = 0;
  eachLineStart(buf, (pos) => {
    if (buf[pos] === 0x3e && quotedFromDepth(buf, pos, rd) >= 1) {
      parts.push(buf.subarray(last, pos));
      last = pos + 1;
    }
  });
  if (parts.length === 0) return Buffer.from(buf);
  parts.push(buf.subarray(last));
  return Buffer.concat(parts);
}

/**
 * Quote From_ lines (inverse of the readers' unescaping): mboxo/mboxcl `From ` → `>From `;
 * mboxrd `>*From ` → `>` + the line; mboxcl2 unchanged.
 * @param {Buffer} raw RFC 5322 message
 * @param {'mboxo'|'mboxrd'|'mboxcl'|'mboxcl2'} variant
 * @returns {Buffer} a new buffer
 */
function escapeMessage(raw, variant) {
  checkVariant(variant);
  if (variant === 'mboxcl2') return Buffer.from(raw);
  const rd = variant === 'mboxrd';
  const parts = [];
  let last = 0;
  eachLineStart(raw, (pos) => {
    const c = raw[pos];
    if (
      (c === 0x46 && startsWithFrom(raw, pos)) ||
      (rd && c === 0x3e && quotedFromDepth(raw, pos, true) >= 0)
    ) {
      parts.push(raw.subarray(last, pos), GT);
      last = pos;
    }
  });
  if (parts.length === 0) return Buffer.from(raw);
  parts.push(raw.subarray(last));
  return Buffer.concat(parts);
}

/**
 * Exact file bytes of an entry produced by MboxSplitter.
 * @param {{fromLine: Buffer, raw: Buffer, variant: string, trailer?: Buffer, original?: Buffer|null}} entry
 * @returns {Buffer}
 */
function formatMboxEntry({ fromLine, raw, variant, trailer, original }) {
  if (original) return Buffer.concat([fromLine, original]);
  return Buffer.concat([fromLine, escapeMessage(raw, variant), trailer || Buffer.alloc(0)]);
}

/** Sender and date for a synthetic From_ line, taken from the message's own headers. */
function fromLineFor(raw) {
  const end = headerEndOffsets(raw);
  const fields = parseHeaderFields(end ? raw.subarray(0, end.headerEnd) : raw);
  const get = (n) => (fields.find(([k]) => k === n) || [])[1];
  let sender = '';
  const rp = get('return-path');
  const from = get('from');
  if (rp !== undefined) sender = (/<([^>]*)>/.exec(rp) || [null, rp])[1].trim();
  else if (from !== undefined) {
    const m = /<([^>\s]+@[^>\s]+)>/.exec(from) || /([^\s<>"(),;:]+@[^\s<>"(),;:]+)/.exec(from);
    sender = m ? m[1] : '';
  }
  return makeFromLine(sender, get('date'));
}

/**
 * Replace/insert a Content-Length header (the body length in bytes, RFC 4155 notes its use by
 * mboxcl/mboxcl2) in a copy of the message. Without a header/body separator there is no body to
 * count, so the message is returned unchanged.
 */
function withContentLength(msg) {
  const end = headerEndOffsets(msg);
  if (!end) return msg;
  const header = msg.subarray(0, end.headerEnd).toString('latin1');
  const lines = header.split(/(?<=\n)/);
  const kept = [];
  let dropping = false;
  for (const line of lines) {
    if (/^[ \t]/.test(line) && dropping) continue;
    dropping = /^content-length[ \t]*:/i.test(line);
    if (!dropping) kept.push(line);
  }
  const bodyLen = msg.length - end.bodyStart;
  const head = Buffer.from(kept.join('') + `Content-Length: ${bodyLen}${end.eol}`, 'latin1');
  return Buffer.concat([head, msg.subarray(end.headerEnd)]);
}

/**
 * Standard bytes of one mbox entry for a target variant, for export.
 * - mboxo/mboxrd: From_ line + quoted message (+ `\n` if it did not end in one) + `\n` separator.
 *   The added final newline is inherent to these formats (the reader cannot know it was added).
 * - mboxcl/mboxcl2: a `Content-Length:` header is inserted or corrected in the output copy only
 *   (mboxcl also quotes From_ lines mboxo-style; mboxcl2 does not, so the body is only delimited
 *   by Content-Length), then `\n` separator. These round-trip exactly, even without a final newline.
 * @param {Buffer} raw RFC 5322 message
 * @param {'mboxo'|'mboxrd'|'mboxcl'|'mboxcl2'} variant
 * @param {Buffer|string} [fromLine] defaults to one built from Return-Path/From and Date headers
 * @returns {Buffer}
 */
function exportEntry(raw, variant, fromLine) {
  checkVariant(variant);
  let from = fromLine == null ? fromLineFor(raw) : Buffer.from(fromLine);
  if (from.length === 0 || from[from.length - 1] !== 0x0a) from = Buffer.concat([from, LF]);
  let body;
  if (variant === 'mboxcl' || variant === 'mboxcl2') {
    body = withContentLength(variant === 'mboxcl' ? escapeMessage(raw, 'mboxo') : raw);
    // No Content-Length possible (no body separator): fall back to newline-terminated form.
    if (!headerEndOffsets(body) && body.length && body[body.length - 1] !== 0x0a) {
      body = Buffer.concat([body, LF]);
    }
  } else {
    body = escapeMessage(raw, variant);
    if (body.length && body[body.length - 1] !== 0x0a) body = Buffer.concat([body, LF]);
  }
  return Buffer.concat([from, body, LF]);
}

module.exports = {
  VARIANTS,
  escapeMessage,
  unescapeMessage,
  formatMboxEntry,
  exportEntry,
  startsWithFrom,
  FROM_SPACE,
};
