'use strict';

// Address-list parsing (RFC 5322 3.4) in one linear pass. Owns the tokenizer and the
// per-address interpretation; must never recurse per member or re-scan the input: a
// 135 KB To: header with nodemailer's addressparser took seconds (a regex that searches for
// an address inside a long word, a recursive re-parse per group member, array concat per
// address). The behaviour follows nodemailer's addressparser, which real mail was tuned on:
// "," and ";" separate addresses outside quotes, comments and angle brackets; a text word
// that looks like an address is taken when no <addr> is given; a comment stands in for a
// missing display name; groups ("name: a, b;") list their members.

const OPEN = { '"': '"', '(': ')', '<': '>' };

/**
 * @typedef {object} RawAddress
 * @property {string} name
 * @property {string} address
 * @property {RawAddress[]} [group] members, for a group
 */

/**
 * Splits a header value into tokens: {op} for the structural characters and
 * {text, kind: 'text'|'quoted'|'comment'|'address', noBreak} for the rest.
 * Linear: every character is looked at once and text is taken as slices.
 */
function tokenize(str) {
  const tokens = [];
  const len = str.length;
  let i = 0;
  let textStart = -1;
  const flushText = (end) => {
    if (textStart >= 0) {
      const t = str.slice(textStart, end).replace(/[\r\n]/g, ' ');
      if (t.trim()) tokens.push({ kind: 'text', text: t.trim() });
      textStart = -1;
    }
  };
  while (i < len) {
    const c = str[i];
    if (c === ',' || c === ';' || c === ':') {
      flushText(i);
      tokens.push({ op: c });
      i++;
    } else if (c in OPEN) {
      flushText(i);
      const close = OPEN[c];
      let j = i + 1;
      let out = '';
      let from = j;
      // quoted strings and comments honour backslash escapes (RFC 5322 3.2.1, 3.2.4)
      const escapes = c !== '<';
      while (j < len && str[j] !== close) {
        if (escapes && str[j] === '\\' && j + 1 < len) {
          out += str.slice(from, j);
          from = j + 1;
          j += 2;
        } else {
          j++;
        }
      }
      out += str.slice(from, j);
      const kind = c === '"' ? 'quoted' : c === '(' ? 'comment' : 'address';
      const next = str[j + 1];
      // a closing mark glued to the following text (`"a"b`) joins the two, as addressparser does
      const noBreak = j < len && next !== undefined && !/[\s,;]/.test(next);
      tokens.push({ kind, text: out.replace(/[\r\n]/g, ' ').trim(), noBreak });
      i = j + 1;
    } else {
      if (textStart < 0) textStart = i;
      i++;
    }
  }
  flushText(len);
  return tokens;
}

const WORD_CHAR = /[A-Za-z0-9_]/;
const ADDR_WORD = /^[^@\s]+@[^@\s]+$/;

/**
 * The first word of `text` that contains an "@" not at its start, trimmed to word characters
 * at both ends (what addressparser's `\b[^@\s]+@[^\s]+\b` finds), without a backtracking
 * regex: that one is quadratic on a long word without "@".
 * @returns {{ address: string, rest: string } | null}
 */
function findAddressIn(text) {
  let from = 0;
  while (from < text.length) {
    const at = text.indexOf('@', from);
    if (at === -1) return null;
    let s = at;
    while (s > 0 && !/\s/.test(text[s - 1])) s--;
    let e = at + 1;
    while (e < text.length && !/\s/.test(text[e])) e++;
    let a = s;
    while (a < at && !WORD_CHAR.test(text[a])) a++;
    let b = e;
    while (b > at + 1 && !WORD_CHAR.test(text[b - 1])) b--;
    if (a < at && b > at + 1 && text.lastIndexOf('@', at - 1) < a) {
      return { address: text.slice(a, b), rest: (text.slice(0, s) + ' ' + text.slice(e)).trim() };
    }
    from = e;
  }
  return null;
}

/** Interprets the tokens of one address (between separators). */
function oneAddress(tokens) {
  const text = [];
  const comment = [];
  const address = [];
  let prev = null;
  for (const t of tokens) {
    const into = t.kind === 'comment' ? comment : t.kind === 'address' ? address : text;
    let v = t.text;
    // an unquoted name with a stray "<" before the real one: keep what follows it
    if (t.kind === 'address') v = v.replace(/^[^<]*<\s*/, '');
    if (!v) {
      prev = t;
      continue;
    }
    if (prev && prev.noBreak && into.length && prev.kind !== 'comment') {
      into[into.length - 1] += v;
    } else {
      into.push(v);
    }
    prev = t;
  }
  if (!address.length && text.length) {
    for (let i = text.length - 1; i >= 0; i--) {
      if (ADDR_WORD.test(text[i])) {
        address.push(text.splice(i, 1)[0]);
        break;
      }
    }
    if (!address.length) {
      for (let i = text.length - 1; i >= 0; i--) {
        const f = findAddressIn(text[i]);
        if (f) {
          address.push(f.address);
          text[i] = f.rest;
          if (!text[i]) text.splice(i, 1);
          break;
        }
      }
    }
  }
  let names = text;
  if (!names.length && comment.length) names = comment;
  const name = names.join(' ');
  const addr = address.length ? address[0] : '';
  const r = { address: addr || name, name: name || addr };
  // only the first address counts; the others go back to the name, as addressparser does
  if (address.length > 1) r.name = names.concat(address.slice(1)).join(' ');
  if (r.address === r.name) {
    if (r.address.includes('@')) r.name = '';
    else r.address = '';
  }
  return r;
}

/**
 * Parses an address-list header value. Groups are returned as {name, group: [...]}; a group
 * inside a group is not valid RFC 5322 and its ":" is read as text.
 *
 * @param {string} value Unicode header value (RFC 2047 words still encoded)
 * @returns {RawAddress[]}
 */
function parseAddresses(value) {
  const tokens = tokenize(String(value || ''));
  const out = [];
  let cur = [];
  let group = null; // {name, members: []} while inside "name: ... ;"
  const end = () => {
    if (cur.length) {
      const a = oneAddress(cur);
      if (a.address || a.name) (group ? group.group : out).push(a);
    }
    cur = [];
  };
  for (const t of tokens) {
    if (t.op === ':' && !group) {
      const name = oneNameOf(cur);
      cur = [];
      group = { name, address: '', group: [] };
      out.push(group);
    } else if (t.op === ';') {
      end();
      group = null;
    } else if (t.op === ',') {
      end();
    } else if (t.op === ':') {
      cur.push({ kind: 'text', text: ':' });
    } else {
      cur.push(t);
    }
  }
  end();
  return out;
}

/** A group's display name: its text (quoted or not), else its comment. */
function oneNameOf(tokens) {
  const text = tokens.filter((t) => t.kind !== 'comment').map((t) => t.text);
  if (text.length) return text.join(' ');
  return tokens.map((t) => t.text).join(' ');
}

module.exports = { parseAddresses };
