'use strict';

/*
 * ENVELOPE and BODYSTRUCTURE (RFC 3501 7.4.2) of a message, from its MIME tree (mime-tree.js).
 * Values are raw header bytes (latin1 strings → written back as the same bytes), as RFC 3501
 * asks: no decoding of RFC 2047 words here, clients do that. Pure.
 */

const { parseTree, fieldValue, paramsOf, splitParams, countLines } = require('./mime-tree');
const { Multi } = require('./writer');

/**
 * @param {Buffer} raw
 * @returns {{envelope: any[], body: any[], bodystructure: any[]}} response values (writer.js)
 */
function describe(raw) {
  const tree = parseTree(raw);
  return {
    envelope: envelopeOf(tree),
    bodystructure: structureOf(raw, tree, true),
    body: structureOf(raw, tree, false),
  };
}

const bin = (s) => (s === null || s === undefined ? null : Buffer.from(s, 'latin1'));

function envelopeOf(node) {
  const f = (k) => fieldValue(node.fields, k);
  const from = addresses(f('from'));
  const sender = addresses(f('sender'));
  const replyTo = addresses(f('reply-to'));
  return [
    bin(f('date')),
    bin(f('subject')),
    from,
    // RFC 3501 7.4.2: sender and reply-to default to from.
    sender || from,
    replyTo || from,
    addresses(f('to')),
    addresses(f('cc')),
    addresses(f('bcc')),
    bin(f('in-reply-to')),
    bin(f('message-id')),
  ];
}

/**
 * An address-list header value → list of (name adl mailbox host), with groups as
 * (NIL NIL name NIL) … (NIL NIL NIL NIL) (RFC 3501 7.4.2); null when empty.
 * @param {string|null} value
 */
function addresses(value) {
  if (!value) return null;
  const out = [];
  for (const item of splitTop(value, ',')) {
    const group = /^\s*((?:"(?:[^"\\]|\\.)*"|[^":<@,])+):(.*?);?\s*$/s.exec(item.text);
    if (item.group && group) {
      out.push([null, null, bin(group[1].trim()), null]);
      for (const sub of splitTop(group[2], ',')) {
        const a = oneAddress(sub.text);
        if (a) out.push(a);
      }
      out.push([null, null, null, null]);
      continue;
    }
    const a = oneAddress(item.text);
    if (a) out.push(a);
  }
  return out.length ? out : null;
}

/** Splits on sep outside quotes, comments, angle brackets; notes items that hold a group. */
function splitTop(value, sep) {
  const items = [];
  let cur = '';
  let quoted = false;
  let paren = 0;
  let angle = false;
  let inGroup = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c === '\\' && (quoted || paren)) {
      cur += c + (value[i + 1] || '');
      i++;
      continue;
    }
    if (!paren && c === '"') quoted = !quoted;
    else if (!quoted && c === '(') paren++;
    else if (!quoted && c === ')' && paren) paren--;
    else if (!quoted && !paren && c === '<') angle = true;
    else if (!quoted && !paren && c === '>') angle = false;
    else if (!quoted && !paren && !angle && c === ':') inGroup = true;
    else if (!quoted && !paren && !angle && c === ';') inGroup = false;
    if (c === sep && !quoted && !paren && !angle && !inGroup) {
      items.push({ text: cur, group: cur.includes(':') });
      cur = '';
      continue;
    }
    cur += c;
  }
  items.push({ text: cur, group: hasTopColon(cur) });
  return items.filter((x) => x.text.trim());
}

function hasTopColon(s) {
  let quoted = false;
  let angle = false;
  for (const c of s) {
    if (c === '"') quoted = !quoted;
    else if (!quoted && c === '<') angle = true;
    else if (!quoted && c === '>') angle = false;
    else if (!quoted && !angle && c === ':') return true;
  }
  return false;
}

function oneAddress(text) {
  const t = text.trim();
  if (!t) return null;
  let name = null;
  let spec = t;
  const lt = t.lastIndexOf('<');
  if (lt >= 0 && t.indexOf('>', lt) > lt) {
    spec = t.slice(lt + 1, t.indexOf('>', lt));
    name = cleanName(t.slice(0, lt));
  } else {
    // `addr (Comment Name)`: the comment is the display name, as most servers report it.
    const c = /\(([^()]*)\)/.exec(t);
    if (c) {
      name = c[1].trim() || null;
      spec = t.replace(/\([^()]*\)/g, '').trim();
    }
  }
  // Route (`@a,@b:user@host`) goes to adl (RFC 3501 7.4.2, obsolete but still seen).
  let adl = null;
  const route = /^(@[^:]+):(.*)$/.exec(spec);
  if (route) {
    adl = route[1];
    spec = route[2];
  }
  spec = spec.trim();
  const at = spec.lastIndexOf('@');
  let mailbox = at >= 0 ? spec.slice(0, at) : spec;
  const host = at >= 0 ? spec.slice(at + 1) : null;
  if (mailbox.startsWith('"') && mailbox.endsWith('"') && mailbox.length > 1) {
    mailbox = mailbox.slice(1, -1).replace(/\\(.)/g, '$1');
  }
  return [bin(name), bin(adl), bin(mailbox || null), bin(host || null)];
}

function cleanName(s) {
  let n = s.trim();
  if (n.startsWith('"') && n.endsWith('"') && n.length > 1) {
    n = n.slice(1, -1).replace(/\\(.)/g, '$1');
  }
  return n || null;
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
  const out = [
    bin(ct.type),
    bin(ct.subtype),
    paramList(ct.params),
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
