'use strict';

/*
 * LIST and LSUB answers (RFC 3501 6.3.8/6.3.9, RFC 3348 CHILDREN, RFC 6154 SPECIAL-USE):
 * pattern matching with `*` and `%` over the user's mailbox names, hierarchy delimiter `/`,
 * and the parents implied by a nested name shown as \Noselect. Also the existence checks of
 * the commands that name a mailbox to create, rename or write to.
 */

const { atom } = require('./writer');
const { encodeUtf7, decodeUtf7 } = require('./args');
const { no } = require('./errors');

const DELIM = '/';

/**
 * @param {string} reference
 * @param {string} pattern
 * @returns {RegExp}
 */
function patternRegex(reference, pattern) {
  let full = decodeUtf7(reference + pattern);
  // INBOX is case-insensitive (RFC 3501 5.1).
  if (/^inbox(?=$|\/)/i.test(full)) full = 'INBOX' + full.slice(5);
  let re = '';
  for (const ch of full) {
    if (ch === '*') re += '.*';
    else if (ch === '%') re += '[^/]*';
    else re += ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 's');
}

/**
 * LIST/LSUB lines for the mailboxes matching pattern.
 * @param {import('./session').Session} s
 * @param {{command: string, reference: string, pattern: string, boxes: Array<{name: string, specialUse?: string|null, subscribed?: boolean}>, onlySubscribed?: boolean, onlySpecialUse?: boolean}} o
 */
function sendList(s, o) {
  if (o.pattern === '') {
    // RFC 3501 6.3.8: an empty pattern asks for the delimiter and the reference's root.
    s.untagged([atom(o.command), [atom('\\Noselect')], DELIM, '']);
    return;
  }
  const names = new Map();
  for (const b of o.boxes) names.set(b.name, b);
  const all = new Set(names.keys());
  for (const n of names.keys()) {
    const parts = n.split(DELIM);
    for (let i = 1; i < parts.length; i++) all.add(parts.slice(0, i).join(DELIM));
  }
  const re = patternRegex(o.reference, o.pattern);
  const sorted = [...all].sort((a, b) => (a === 'INBOX' ? -1 : b === 'INBOX' ? 1 : a < b ? -1 : 1));
  for (const name of sorted) {
    if (!re.test(name)) continue;
    const box = names.get(name);
    if (o.onlySubscribed && !(box && box.subscribed)) continue;
    if (o.onlySpecialUse && !(box && box.specialUse)) continue;
    const attrs = [];
    if (!box) attrs.push('\\Noselect');
    const hasKids = [...all].some((x) => x.startsWith(name + DELIM));
    attrs.push(hasKids ? '\\HasChildren' : '\\HasNoChildren');
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

/** APPEND, COPY and MOVE write only to a mailbox that exists: NO [TRYCREATE] (RFC 3501 6.3.11). */
async function requireTarget(s, name) {
  if (!(await mailboxNames(s)).has(name)) throw no('No such mailbox', 'TRYCREATE');
}

module.exports = { sendList, patternRegex, mailboxNames, requireTarget, DELIM };
