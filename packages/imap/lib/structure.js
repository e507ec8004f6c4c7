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
  // Address fields that occur more than once (two `Cc:` lines) keep every line's addresses,
  // in order, as Dovecot does: the second line is not dropped (issue 28 item 5).
  const list = (k) => {
    const values = node.fields
      .filter((x) => x.key === k)
      .map((x) => fieldValue([x], k))
      .filter(Boolean);
    return addresses(values.join(', '));
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
 * An address-list header value → list of (name adl mailbox host), with groups as
 * (NIL NIL name NIL) … (NIL NIL NIL NIL) (RFC 3501 7.4.2); null when empty. Parsed as RFC 5322
 * 3.4 tokens: comments are never addresses (`group2: (foo) ;` is an empty group) and never
 * part of an addr-spec (`<user (c)@ (c) domain.org>` is user@domain.org); a comment after a
 * bare addr-spec is its display name, as Dovecot reports it.
 * @param {string|null} value
 */
function addresses(value) {
  if (!value) return null;
  const toks = tokenize(value);
  const out = [];
  let i = 0;
  while (i < toks.length) {
    const groupEnd = groupColon(toks, i);
    if (groupEnd >= 0) {
      out.push([null, null, bin(phrase(toks, i, groupEnd)), null]);
      i = groupEnd + 1;
      while (i < toks.length && !isSpecial(toks[i], ';')) {
        const stop = nextStop(toks, i, true);
        const a = mailbox(toks, i, stop);
        if (a) out.push(a);
        i = stop < toks.length && isSpecial(toks[stop], ',') ? stop + 1 : stop;
      }
      out.push([null, null, null, null]);
      i++; // the ';'
      continue;
    }
    const stop = nextStop(toks, i, false);
    const a = mailbox(toks, i, stop);
    if (a) out.push(a);
    i = stop + 1;
  }
  return out.length ? out : null;
}

/**
 * RFC 5322 lexical tokens: `{t: 'word', v, q}` (atom, or quoted string unescaped when q),
 * `{t: 'comment', v}`, `{t: 'literal', v}` (domain literal with its brackets), `{t: 's', v}`
 * (one of `< > , : ; @ .`); sp: whitespace came before it. Linear in the value.
 */
function tokenize(value) {
  const toks = [];
  let sp = false;
  let i = 0;
  const n = value.length;
  while (i < n) {
    const c = value[i];
    if (c === ' ' || c === '\t' || c === '\r' || c === '\n') {
      sp = true;
      i++;
      continue;
    }
    if (c === '"') {
      let v = '';
      i++;
      while (i < n && value[i] !== '"') {
        if (value[i] === '\\' && i + 1 < n) i++;
        v += value[i++];
      }
      i++;
      toks.push({ t: 'word', v, q: true, sp });
    } else if (c === '(') {
      let depth = 1;
      let v = '';
      i++;
      while (i < n && depth) {
        const d = value[i];
        if (d === '\\' && i + 1 < n) {
          v += value[i + 1];
          i += 2;
          continue;
        }
        if (d === '(') depth++;
        else if (d === ')' && --depth === 0) break;
        v += d;
        i++;
      }
      i++;
      toks.push({ t: 'comment', v: v.replace(/\s+/g, ' ').trim(), sp });
    } else if (c === '[') {
      const close = value.indexOf(']', i);
      const e = close < 0 ? n : close + 1;
      toks.push({ t: 'literal', v: value.slice(i, e), sp });
      i = e;
    } else if ('<>,:;@.'.includes(c)) {
      toks.push({ t: 's', v: c, sp });
      i++;
    } else {
      let e = i;
      while (e < n && !' \t\r\n"()[<>,:;@.'.includes(value[e])) e++;
      if (e === i) e++; // a stray ']' or '>' is a word of its own
      toks.push({ t: 'word', v: value.slice(i, e), q: false, sp });
      i = e;
    }
    sp = false;
  }
  return toks;
}

const isSpecial = (tok, v) => tok.t === 's' && tok.v === v;

/** Index of the ':' ending a group's display name at i, or -1 (a plain address). */
function groupColon(toks, i) {
  for (let k = i; k < toks.length; k++) {
    const tok = toks[k];
    if (tok.t === 'word' || tok.t === 'comment' || isSpecial(tok, '.')) continue;
    return isSpecial(tok, ':') ? k : -1;
  }
  return -1;
}

/** Index of the ',' (or, in a group, ';') ending the address at i; '<…>' is skipped. */
function nextStop(toks, i, inGroup) {
  let angle = false;
  for (let k = i; k < toks.length; k++) {
    const tok = toks[k];
    if (tok.t !== 's') continue;
    if (tok.v === '<') angle = true;
    else if (tok.v === '>') angle = false;
    else if (!angle && (tok.v === ',' || (inGroup && tok.v === ';'))) return k;
  }
  return toks.length;
}

/** Display-name words between a and b (comments left out), spaced as written. */
function phrase(toks, a, b) {
  let out = '';
  for (let k = a; k < b; k++) {
    const tok = toks[k];
    if (tok.t === 'comment') continue;
    out += (out && tok.sp ? ' ' : '') + tok.v;
  }
  return out.trim() || null;
}

/** One mailbox from toks[a, b): name-addr or addr-spec; null when there is none. */
function mailbox(toks, a, b) {
  let lt = -1;
  for (let k = a; k < b; k++) if (isSpecial(toks[k], '<')) lt = lt < 0 ? k : lt;
  let name = null;
  let specFrom = a;
  let specTo = b;
  if (lt >= 0) {
    name = phrase(toks, a, lt);
    specFrom = lt + 1;
    specTo = specFrom;
    while (specTo < b && !isSpecial(toks[specTo], '>')) specTo++;
  } else {
    // `addr (Comment Name)`: the last comment after the addr-spec is the display name, as
    // Dovecot reports it; one before it is not.
    let k = b - 1;
    while (k >= a && toks[k].t === 'comment' && !toks[k].v) k--;
    if (k >= a && toks[k].t === 'comment') name = toks[k].v;
  }
  const spec = toks.slice(specFrom, specTo).filter((tok) => tok.t !== 'comment');
  // Route (`@a,@b:user@host`) goes to adl (RFC 3501 7.4.2, obsolete but still seen).
  let adl = null;
  let s0 = 0;
  if (spec.length && isSpecial(spec[0], '@')) {
    const colon = spec.findIndex((tok) => isSpecial(tok, ':'));
    if (colon > 0) {
      adl = spec
        .slice(0, colon)
        .map((tok) => tok.v)
        .join('');
      s0 = colon + 1;
    }
  }
  let at = -1;
  for (let k = spec.length - 1; k >= s0; k--) {
    if (isSpecial(spec[k], '@')) {
      at = k;
      break;
    }
  }
  const local = spec.slice(s0, at < 0 ? spec.length : at);
  const mbox = local.map((tok) => tok.v).join('');
  const host =
    at < 0
      ? ''
      : spec
          .slice(at + 1)
          .map((tok) => tok.v)
          .join('');
  // A comment alone (`group2: (foo) ;`) is not an address.
  if (!mbox && !host && lt < 0) return null;
  // An address without a local part or domain (`foo`, `<>`, `bare@`) is answered with
  // Dovecot's placeholders, so clients that need both see the same values from either server.
  return [bin(name), bin(adl), bin(mbox || 'MISSING_MAILBOX'), bin(host || 'MISSING_DOMAIN')];
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
