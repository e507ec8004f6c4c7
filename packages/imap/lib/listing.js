'use strict';

/*
 * LIST and LSUB answers (RFC 3501 6.3.8/6.3.9, RFC 3348 CHILDREN, RFC 6154 SPECIAL-USE):
 * pattern matching with `*` and `%` over the user's mailbox names, hierarchy delimiter `/`,
 * and the parents implied by a nested name shown as \Noselect. Also the existence checks of
 * the commands that name a mailbox to create, rename or write to.
 */

const { atom } = require('./protocol/writer');
const { encodeUtf7, decodeUtf7 } = require('./protocol/args');
const { no, bad } = require('./errors');

const DELIM = '/';

// A LIST/LSUB pattern (reference + mailbox) longer than this is refused before any matching:
// RFC 3501 sets no limit, and real clients send a name or a name plus `*`/`%`.
const MAX_PATTERN = 1024;
// How many names a LIST answer matches between two turns of the event loop, so that a user
// with a very large hierarchy never holds other sessions up for the whole answer.
const NAMES_PER_TURN = 256;

/**
 * Compiles a LIST pattern into a matcher that runs in time linear in the name's length
 * (times pattern length / 32): a bit-parallel simulation of the pattern's automaton (one bit
 * per pattern position, Shift-And), never a backtracking regular expression. A run of
 * wildcards collapses first (`%*%*` is `*`, `%%` is `%`), so no two wildcards are adjacent and
 * the empty-match step of a wildcard is one shift. `*` matches anything, `%` anything but the
 * hierarchy delimiter (RFC 3501 6.3.8).
 * Until 2026-11-27 the pattern became a RegExp: `%*%*%*%*%*%*%*%*%*a` (28 bytes) blocked the
 * event loop for 5.5 s and 500 pairs for ever (issue 29).
 * @param {string} reference
 * @param {string} pattern
 * @returns {{test: (name: string) => boolean}}
 * @throws {ImapError} BAD when reference + pattern is longer than MAX_PATTERN
 */
function patternMatcher(reference, pattern) {
  if (reference.length + pattern.length > MAX_PATTERN) throw bad('Mailbox pattern too long');
  let full = decodeUtf7(reference + pattern);
  // INBOX is case-insensitive (RFC 3501 5.1).
  if (/^inbox(?=$|\/)/i.test(full)) full = 'INBOX' + full.slice(5);
  // Tokens: a char code, or STAR / PCT; runs of wildcards collapsed.
  const tokens = [];
  for (let i = 0; i < full.length; i++) {
    const c = full.charCodeAt(i);
    if (c !== STAR && c !== PCT) {
      tokens.push(c);
      continue;
    }
    let star = false;
    while (i < full.length && (full.charCodeAt(i) === STAR || full.charCodeAt(i) === PCT)) {
      if (full.charCodeAt(i) === STAR) star = true;
      i++;
    }
    i--;
    tokens.push(star ? STAR : PCT);
  }
  const k = tokens.length; // state i: the first i tokens are matched; state k accepts
  const words = (k >>> 5) + 1;
  const stars = new Uint32Array(words);
  const wild = new Uint32Array(words);
  const literal = new Map(); // char code -> states whose next token is that char
  tokens.forEach((t, i) => {
    const bit = 1 << (i & 31);
    if (t === STAR || t === PCT) {
      wild[i >>> 5] |= bit;
      if (t === STAR) stars[i >>> 5] |= bit;
    } else {
      if (!literal.has(t)) literal.set(t, new Uint32Array(words));
      literal.get(t)[i >>> 5] |= bit;
    }
  });
  const none = new Uint32Array(words);
  const start = new Uint32Array(words);
  start[0] = 1;
  closure(start, wild);
  const cur = new Uint32Array(words);
  const next = new Uint32Array(words);
  const acceptWord = k >>> 5;
  const acceptBit = 1 << (k & 31);
  return {
    test(name) {
      cur.set(start);
      for (let p = 0; p < name.length; p++) {
        const c = name.charCodeAt(p);
        const lit = literal.get(c) || none;
        // A wildcard stays where it is on this char (`%` not on the delimiter); a literal
        // state equal to the char moves one state on.
        const stay = c === DELIM_CODE ? stars : wild;
        let carry = 0;
        let any = 0;
        for (let w = 0; w < words; w++) {
          const moved = cur[w] & lit[w];
          next[w] = (moved << 1) | carry | (cur[w] & stay[w]);
          carry = moved >>> 31;
          any |= next[w];
        }
        if (!any) return false;
        closure(next, wild);
        cur.set(next);
      }
      return (cur[acceptWord] & acceptBit) !== 0;
    },
  };
}

const STAR = 42; // '*'
const PCT = 37; // '%'
const DELIM_CODE = 47; // '/'

/** A wildcard may match nothing: each active wildcard state also activates the next state. */
function closure(set, wild) {
  let carry = 0;
  for (let w = 0; w < set.length; w++) {
    const from = set[w] & wild[w];
    const out = (from << 1) | carry;
    carry = from >>> 31;
    set[w] |= out;
  }
}

/**
 * LIST/LSUB lines for the mailboxes matching pattern. Yields to the event loop every
 * NAMES_PER_TURN names.
 * @param {import('./session').Session} s
 * @param {{command: string, reference: string, pattern: string, boxes: Array<{name: string, specialUse?: string|null, subscribed?: boolean, nonExistent?: boolean}>, onlySubscribed?: boolean, onlySpecialUse?: boolean, markSubscribed?: boolean}} o
 * @returns {Promise<void>}
 */
async function sendList(s, o) {
  if (o.pattern === '') {
    // RFC 3501 6.3.8: an empty pattern asks for the delimiter and the reference's root.
    s.untagged([atom(o.command), [atom('\\Noselect')], DELIM, '']);
    return;
  }
  const matcher = patternMatcher(o.reference, o.pattern);
  const names = new Map();
  for (const b of o.boxes) names.set(b.name, b);
  const all = new Set(names.keys());
  // Every name that has an inferior, found once (not a scan of all names per answer line).
  const parents = new Set();
  for (const n of names.keys()) {
    const parts = n.split(DELIM);
    for (let i = 1; i < parts.length; i++) {
      const p = parts.slice(0, i).join(DELIM);
      all.add(p);
      parents.add(p);
    }
  }
  // LSUB (RFC 3501 6.3.9): a parent that is not itself in the list is answered, \Noselect,
  // only where `%` stops above a subscribed name the pattern does not reach (`LSUB "" %` with
  // foo/bar subscribed answers foo); with `*` the subscribed name itself is the answer.
  let shownParents = null;
  if (o.command === 'LSUB') {
    shownParents = new Set();
    for (const n of names.keys()) {
      if (matcher.test(n)) continue;
      const parts = n.split(DELIM);
      for (let i = 1; i < parts.length; i++) shownParents.add(parts.slice(0, i).join(DELIM));
    }
  }
  const sorted = [...all].sort((a, b) => (a === 'INBOX' ? -1 : b === 'INBOX' ? 1 : a < b ? -1 : 1));
  for (let i = 0; i < sorted.length; i++) {
    if (i > 0 && i % NAMES_PER_TURN === 0) {
      await new Promise((r) => setImmediate(r));
      if (s.closed) return;
    }
    const name = sorted[i];
    if (!matcher.test(name)) continue;
    const box = names.get(name);
    if (!box && shownParents && !shownParents.has(name)) continue;
    if (o.onlySubscribed && !(box && box.subscribed)) continue;
    if (o.onlySpecialUse && !(box && box.specialUse)) continue;
    const attrs = [];
    if (!box) attrs.push('\\Noselect');
    else if (box.nonExistent) attrs.push('\\NonExistent');
    attrs.push(parents.has(name) ? '\\HasChildren' : '\\HasNoChildren');
    if (box && box.specialUse) attrs.push(box.specialUse);
    if (o.command === 'LIST' && o.markSubscribed && box && box.subscribed)
      attrs.push('\\Subscribed');
    s.untagged([atom(o.command), attrs.map(atom), DELIM, encodeUtf7(name)]);
  }
}

/** The user's mailbox names. */
async function mailboxNames(s) {
  return new Set((await s.backend.listMailboxes()).map((b) => b.name));
}

/**
 * COPY and MOVE write only to a mailbox that exists: NO [TRYCREATE] (RFC 3501 6.4.7). One
 * read of that mailbox's row (status without counts), not a listing of every mailbox with its
 * counts: at 24k messages the listing was most of PostgreSQL's time per write (issue 32).
 */
async function requireTarget(s, name) {
  try {
    await s.backend.status(name, { counts: false, warm: false });
  } catch (err) {
    throw tryCreate(err);
  }
}

/** MAILBOX_NOT_FOUND of a write's target as NO [TRYCREATE]; other errors as they are. */
function tryCreate(err) {
  return err && err.code === 'MAILBOX_NOT_FOUND' ? no('No such mailbox', 'TRYCREATE') : err;
}

module.exports = {
  sendList,
  patternMatcher,
  mailboxNames,
  requireTarget,
  tryCreate,
  DELIM,
  MAX_PATTERN,
};
