'use strict';

/*
 * The FLAGS and PERMANENTFLAGS a selected mailbox announces (RFC 3501 7.2.6, 7.1): the system
 * flags and every keyword in use in the mailbox, so a client never meets a keyword in a FETCH
 * that FLAGS did not list. A keyword that appears later (STORE, APPEND, another session) is
 * announced with a new FLAGS before the FETCH that carries it. PERMANENTFLAGS adds `\*`: any
 * keyword can be created. Owns view.keywords.
 */

const { atom } = require('./protocol/writer');

const SYSTEM_FLAGS = ['\\Answered', '\\Flagged', '\\Deleted', '\\Seen', '\\Draft'];

/**
 * Adds keywords to the view's set; true when one was new.
 * @param {import('./view').MailboxView} v
 * @param {Iterable<string[]|null|undefined>} lists keyword lists (rows' `keywords`)
 */
function learn(v, lists) {
  let fresh = false;
  for (const list of lists) {
    if (!list || !list.length) continue;
    for (const k of list) {
      // Keywords are case-insensitive (RFC 3501 2.3.2): one entry per spelling class.
      const key = k.toLowerCase();
      if (!v.keywords.has(key)) {
        v.keywords.set(key, k);
        fresh = true;
      }
    }
  }
  return fresh;
}

/** `* FLAGS (…)` and `* OK [PERMANENTFLAGS (…)]` for the view. */
function sendFlags(s, v) {
  const all = [...SYSTEM_FLAGS, ...v.keywords.values()];
  s.untagged([atom('FLAGS'), all.map(atom)]);
  s.untagged([
    atom(`OK [PERMANENTFLAGS ${v.readOnly ? '()' : `(${all.join(' ')} \\*)`}] Flags permitted`),
  ]);
}

/**
 * Announces keywords the client has not been told of yet (a new FLAGS), before a response
 * that carries them.
 * @param {import('./session').Session} s
 * @param {import('./view').MailboxView} v
 * @param {Iterable<string[]|null|undefined>} lists
 */
function announceKeywords(s, v, lists) {
  if (learn(v, lists)) sendFlags(s, v);
}

module.exports = { SYSTEM_FLAGS, learn, sendFlags, announceKeywords };
