'use strict';

/*
 * STORE and UID STORE (RFC 3501 6.4.6; RFC 7162 3.1.3 UNCHANGEDSINCE and MODIFIED): one
 * service setFlags call per command; FETCH responses carry the resulting flags.
 */

const { atom } = require('../protocol/writer');
const { bad, no } = require('../errors');
const { astring, atomArg, listArg, numberArg, flagsArg } = require('../protocol/args');
const {
  parseSequenceSet,
  resolveSeq,
  resolveUid,
  pastEnd,
  formatSet,
} = require('../protocol/sequence');
const { rowsFor, flagsOf, flagResult } = require('../mail-data');
const { announceKeywords } = require('../keywords');

const MAX_MODSEQ = Number.MAX_SAFE_INTEGER;

/**
 * @param {import('./session').Session} s
 * @param {object[]} args sequence set, [(UNCHANGEDSINCE n)], item, flags
 * @param {boolean} byUid
 * @returns {Promise<{code?: string}>}
 */
async function runStore(s, args, byUid) {
  const a = [...args];
  if (a.length < 3) throw bad('STORE needs a sequence set, an item and flags');
  let ranges;
  try {
    ranges = parseSequenceSet(astring(a.shift(), 'sequence set'));
  } catch (err) {
    throw bad(err.message);
  }
  let unchangedSince = null;
  if (a[0].type === 'list') {
    const mods = listArg(a.shift(), 'store modifiers');
    if (mods.length !== 2 || atomArg(mods[0], 'store modifier') !== 'UNCHANGEDSINCE') {
      throw bad('Invalid store modifier');
    }
    unchangedSince = numberArg(mods[1], 'mod-sequence', MAX_MODSEQ);
    s.condstore = true;
  }
  const item = atomArg(a.shift(), 'store item');
  const m = /^([+-]?)FLAGS(\.SILENT)?$/.exec(item);
  if (!m) throw bad('Invalid store item');
  if (!a.length) throw bad('Missing flags');
  const flags = a.length === 1 ? flagsArg(a[0]) : flagsArg({ type: 'list', value: a });
  const v = s.view;
  if (v.readOnly) throw no('Mailbox is read-only', 'READ-ONLY');
  // \Recent is session state the server sets, never the client (RFC 3501 2.3.2).
  const wanted = flags.filter((f) => f !== '\\Recent');
  if (!byUid && pastEnd(ranges, v.total)) throw bad('Invalid message sequence number');
  const seqs = byUid ? resolveUid(ranges, v.uids) : resolveSeq(ranges, v.total);
  if (!seqs.length) return {};
  const uids = seqs.map((n) => v.uidAt(n));
  const rows = await rowsFor(s.backend, v.name, uids, s.knownStatus());
  let targets = uids.filter((u) => rows.has(u));
  const modified = [];
  if (unchangedSince !== null) {
    // RFC 7162 3.1.3: UNCHANGEDSINCE 0 fails only where a named item exists (a system flag
    // always, a keyword where the message has it), so a client can set $MDNSent just once.
    const system = wanted.some((f) => f.startsWith('\\'));
    const lower = new Set(wanted.map((f) => f.toLowerCase()));
    const late = (row) =>
      unchangedSince === 0
        ? system || (row.keywords || []).some((k) => lower.has(k.toLowerCase()))
        : Number(row.modseq) > unchangedSince;
    targets = targets.filter((u) => {
      const keep = !late(rows.get(u));
      if (!keep) modified.push(u);
      return keep;
    });
  }
  let add = [];
  let remove = [];
  if (m[1] === '+') add = wanted;
  else if (m[1] === '-') remove = wanted;
  else {
    add = wanted;
    const present = new Set();
    for (const u of targets) for (const f of flagsOf(rows.get(u))) present.add(f);
    const keep = new Set(wanted.map((f) => f.toLowerCase()));
    remove = [...present].filter((f) => !keep.has(f.toLowerCase()));
  }
  let changed = [];
  let highestModseq = null;
  // The checks above read rows as of this command's start; the service decides both again in
  // the write itself (pg: under the mailbox lock), so a change another session makes in
  // between is neither overwritten past UNCHANGEDSINCE nor left standing by a FLAGS replace.
  const replace = m[1] === '';
  if (targets.length && (add.length || remove.length || replace)) {
    const res = await s.backend.setFlags(v.name, targets, add, remove, {
      replace,
      unchangedSince,
    });
    ({ changed, highestModseq } = flagResult(res));
    const late = new Set((res && res.modified) || []);
    if (late.size) {
      targets = targets.filter((u) => !late.has(u));
      modified.push(...late);
      modified.sort((x, y) => x - y);
    }
  }
  v.noteOwn(changed);
  // A keyword this STORE set for the first time in the mailbox: a new FLAGS before the FETCHes.
  announceKeywords(s, v, [add.filter((f) => !f.startsWith('\\'))]);
  const byUidChanged = new Map(changed.map((c) => [Number(c.uid), c]));
  const silent = Boolean(m[2]);
  for (const uid of targets) {
    const c = byUidChanged.get(uid);
    // RFC 7162 3.1.3: with CONDSTORE, changed messages are reported even for .SILENT.
    if (silent && !(c && unchangedSince !== null)) continue;
    const state = c || rows.get(uid);
    const items = [];
    if (byUid) items.push(atom('UID'), uid);
    items.push(atom('FLAGS'), flagsOf(state, v.recent).map(atom));
    if (s.condstore) items.push(atom('MODSEQ'), [Number(state.modseq)]);
    s.untagged([v.seqOf(uid), atom('FETCH'), items]);
  }
  // Every change is reported above (or silent by request), so the view is current up to it.
  if (changed.length && highestModseq != null) v.noteOwnModseq(highestModseq);
  if (modified.length) {
    const list = byUid ? modified : modified.map((u) => v.seqOf(u));
    return { code: `MODIFIED ${formatSet(list)}`, text: 'Some messages were modified meanwhile' };
  }
  return {};
}

/** STORE (RFC 3501 6.4.6); UID STORE (uid.js) calls runStore with byUid. */
module.exports = {
  name: 'STORE',
  states: ['selected'],
  usesView: true,
  expunges: false,
  run: (s, cmd) => runStore(s, cmd.args, false),
  runStore,
};
