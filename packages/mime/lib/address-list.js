'use strict';

/*
 * Address lists as IMAP reads them (RFC 5322 3.4 tokens, RFC 3501 7.4.2 ENVELOPE groups): the
 * one reading behind the IMAP server's ENVELOPE and the FROM/TO/CC search text, so both agree
 * with each other and with Dovecot. Comments are never addresses and never part of an
 * addr-spec (`<user (c)@ (c) domain.org>` is user@domain.org); a comment after a bare addr-spec
 * is its display name; groups are kept as start and end entries. Linear in the value, no
 * recursion. Works on any string: raw header bytes as latin1 (ENVELOPE) or Unicode (search).
 * The display path (./address.js, nodemailer-compatible) is separate and unchanged.
 */

/**
 * @typedef {object} AddressEntry
 * @property {'address'|'group'|'end'} kind group: a group starts (name is its display name);
 *   end: the group ends
 * @property {string|null} [name] display name (quoted strings unescaped), or null
 * @property {string|null} [adl] source route (`@a,@b`), or null
 * @property {string} [mailbox] local part ('' when missing)
 * @property {string} [host] domain ('' when missing)
 * @property {boolean} [angle] written as `<…>`
 */

/**
 * RFC 5322 lexical tokens: `{t: 'word', v, q}` (atom, or quoted string unescaped when q),
 * `{t: 'comment', v}`, `{t: 'literal', v}` (domain literal with its brackets), `{t: 's', v}`
 * (one of `< > , : ; @ .`); sp: whitespace came before it.
 * @param {string} value
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
      if (e === i) e++; // a stray ']' is a word of its own
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

/** Index of the ',' (or, in a group, ';') ending the address at i; `<…>` is skipped. */
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
  for (let k = a; k < b && lt < 0; k++) if (isSpecial(toks[k], '<')) lt = k;
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
  for (let k = spec.length - 1; k >= s0 && at < 0; k--) if (isSpecial(spec[k], '@')) at = k;
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
  return { kind: 'address', name, adl, mailbox: mbox, host, angle: lt >= 0 };
}

/**
 * An address-list header value → entries in order: addresses, and groups as a `group` entry,
 * their members, then an `end` entry. Several values (the same field given twice) are read
 * as one list.
 * @param {string|string[]|null} value
 * @returns {AddressEntry[]}
 */
function addressEntries(value) {
  const text = Array.isArray(value) ? value.filter(Boolean).join(', ') : value;
  if (!text) return [];
  const toks = tokenize(text);
  const out = [];
  let i = 0;
  while (i < toks.length) {
    const colon = groupColon(toks, i);
    if (colon >= 0) {
      out.push({ kind: 'group', name: phrase(toks, i, colon) });
      i = colon + 1;
      while (i < toks.length && !isSpecial(toks[i], ';')) {
        const stop = nextStop(toks, i, true);
        const a = mailbox(toks, i, stop);
        if (a) out.push(a);
        i = stop < toks.length && isSpecial(toks[stop], ',') ? stop + 1 : stop;
      }
      out.push({ kind: 'end' });
      i++; // the ';'
      continue;
    }
    const stop = nextStop(toks, i, false);
    const a = mailbox(toks, i, stop);
    if (a) out.push(a);
    i = stop + 1;
  }
  return out;
}

// RFC 5322 atext: a display name made only of these is written without quotes.
const ATEXT = /^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~\u0080-\uffff]*$/;
// A dot-atom local part is written as is; any other keeps its quotes (`"a b"@x.org`).
const DOT_ATOM = /^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~.\u0080-\uffff]+$/;

/**
 * The text SEARCH FROM/TO/CC match as a substring (RFC 3501 6.4.4), written as Dovecot 2.3
 * writes an address list for its search (checked against it on real list mail): every address
 * as `<local@domain>`, after its display name when it has one (`"Bob B" <bob@x>`: quoted
 * unless it is one atom or holds an RFC 2047 word, then decoded), groups as `name:` then their
 * members then `;`, entries joined by `, `. Comments are gone, so `FROM user@domain.org` finds
 * `<user (comment)@ (comment) domain.org>` and `CC foo` does not find `g: (foo) ;`.
 * @param {string|string[]|null} value Unicode header value(s)
 * @param {(s: string) => string} [decodeName] applied to display names (RFC 2047 decoding)
 * @returns {string}
 */
function addressSearchText(value, decodeName = (s) => s) {
  let out = '';
  let sep = '';
  for (const e of addressEntries(value)) {
    if (e.kind === 'end') {
      out += ';';
      sep = ', ';
      continue;
    }
    if (e.kind === 'group') {
      out += `${sep}${e.name ? decodeName(e.name) : ''}:`;
      // The first member follows the colon and a space; an empty group is `name:;`.
      sep = ' ';
      continue;
    }
    const local =
      !e.mailbox || DOT_ATOM.test(e.mailbox)
        ? e.mailbox
        : `"${e.mailbox.replace(/(["\\])/g, '\\$1')}"`;
    const spec = `${local || 'MISSING_MAILBOX'}@${e.host || 'MISSING_DOMAIN'}`;
    let name = '';
    if (e.name) {
      name = decodeName(e.name);
      if (!e.name.includes('=?') && !ATEXT.test(name)) {
        name = `"${name.replace(/(["\\])/g, '\\$1')}"`;
      }
    }
    out += `${sep}${name ? `${name} ` : ''}<${e.adl ? `${e.adl}:` : ''}${spec}>`;
    sep = ', ';
  }
  return out;
}

module.exports = { addressEntries, addressSearchText, tokenize };
