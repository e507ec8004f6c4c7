'use strict';

/*
 * ENVELOPE and BODYSTRUCTURE (RFC 3501 7.4.2) of a message, from its MIME tree (tree.js).
 * Values are raw header bytes (latin1 strings → written back as the same bytes), as RFC 3501
 * asks: no decoding of RFC 2047 words here, clients do that. Pure.
 */

const { parseTree, fieldValue, paramsOf, splitParams, countLines } = require('./tree');
const { Multi } = require('./imap-wire');
const { addressEntries } = require('./address-list');

/**
 * @param {Buffer} raw the message as served (CRLF form: crlf.js)
 * @param {import('./tree').MimeNode} [tree] its tree, when the caller parsed it already
 * @returns {{envelope: any[], body: any[], bodystructure: any[]}} response values (imap-wire.js)
 */
function describe(raw, tree = parseTree(raw)) {
  return {
    envelope: envelopeOf(tree),
    bodystructure: structureOf(raw, tree, true),
    body: structureOf(raw, tree, false),
  };
}

const bin = (s) => (s === null || s === undefined ? null : Buffer.from(s, 'latin1'));

function envelopeOf(node) {
  const f = (k) => fieldValue(node.fields, k);
  // Address fields that occur more than once (two `Cc:` lines) keep every line's addresses,
  // in order, as Dovecot does: the second line is not dropped (issue 28 item 5).
  const list = (k) => {
    const values = node.fields.filter((x) => x.key === k).map((x) => fieldValue([x], k));
    return addresses(values);
  };
  const from = list('from');
  const sender = list('sender');
  const replyTo = list('reply-to');
  return [
    bin(f('date')),
    bin(f('subject')),
    from,
    // RFC 3501 7.4.2: sender and reply-to default to from.
    sender || from,
    replyTo || from,
    list('to'),
    list('cc'),
    list('bcc'),
    bin(f('in-reply-to')),
    bin(f('message-id')),
  ];
}

/**
 * An address-list header value (or the values of a field given more than once) → list of
 * (name adl mailbox host), with groups as (NIL NIL name NIL) … (NIL NIL NIL NIL) (RFC 3501
 * 7.4.2); null when empty. Read by @mailgate/mime addressEntries (RFC 5322 3.4 tokens: comments
 * are never addresses nor part of an addr-spec), the same reading as SEARCH FROM/TO/CC's text.
 * An address without local part or domain (`foo`, `<>`, `bare@`) gets Dovecot's placeholders.
 * @param {string|string[]|null} value
 */
function addresses(value) {
  const out = [];
  for (const e of addressEntries(value)) {
    if (e.kind === 'group') out.push([null, null, bin(e.name), null]);
    else if (e.kind === 'end') out.push([null, null, null, null]);
    else {
      out.push([
        bin(e.name),
        bin(e.adl),
        bin(e.mailbox || 'MISSING_MAILBOX'),
        bin(e.host || 'MISSING_DOMAIN'),
      ]);
    }
  }
  return out.length ? out : null;
}

function structureOf(raw, node, extended) {
  const ct = node.contentType;
  if (ct.type === 'multipart') {
    const kids = node.children.length
      ? node.children.map((c) => structureOf(raw, c, extended))
      : // A multipart without parts (no boundary found): one empty text part, as Dovecot.
        [
          [
            bin('text'),
            bin('plain'),
            [bin('charset'), bin('us-ascii')],
            null,
            null,
            bin('7bit'),
            0,
            0,
          ],
        ];
    const out = [...kids, bin(ct.subtype)];
    if (extended) {
      out.push(paramList(ct.params), disposition(node), language(node), location(node));
    }
    return new Multi(out);
  }
  const f = (k) => fieldValue(node.fields, k);
  const size = node.end - node.headerEnd;
  // A text part without a charset is us-ascii (RFC 2045 5.2); said explicitly, as Dovecot does.
  const params =
    ct.type === 'text' && !ct.params.some(([k]) => k === 'charset')
      ? [...ct.params, ['charset', 'us-ascii']]
      : ct.params;
  const out = [
    bin(ct.type),
    bin(ct.subtype),
    paramList(params),
    bin(f('content-id')),
    bin(f('content-description')),
    bin((f('content-transfer-encoding') || '7bit').toLowerCase()),
    size,
  ];
  if (node.message) {
    out.push(envelopeOf(node.message), structureOf(raw, node.message, extended));
    out.push(countLines(raw, node.headerEnd, node.end));
  } else if (ct.type === 'text') {
    out.push(countLines(raw, node.headerEnd, node.end));
  }
  if (extended) {
    out.push(bin(f('content-md5')), disposition(node), language(node), location(node));
  }
  return out;
}

function paramList(params) {
  if (!params.length) return null;
  const out = [];
  for (const [k, v] of params) out.push(bin(k), bin(v));
  return out;
}

function disposition(node) {
  const v = fieldValue(node.fields, 'content-disposition');
  if (!v) return null;
  const [main, ...rest] = splitParams(v);
  return [bin(main.trim().toLowerCase() || 'attachment'), paramList(paramsOf(rest))];
}

function language(node) {
  const v = fieldValue(node.fields, 'content-language');
  if (!v) return null;
  const langs = v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return langs.length ? langs.map(bin) : null;
}

function location(node) {
  return bin(fieldValue(node.fields, 'content-location'));
}

module.exports = { describe, addresses, envelopeOf };
