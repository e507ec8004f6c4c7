'use strict';

/*
 * COPY, MOVE and their UID forms (RFC 3501 6.4.7, RFC 6851 MOVE, RFC 4315 COPYUID): one
 * service call each; MOVE announces the removed messages after the COPYUID.
 */

const { atom } = require('../protocol/writer');
const { bad, no } = require('../errors');
const { astring, mailboxArg } = require('../protocol/args');
const {
  parseSequenceSet,
  resolveSeq,
  resolveUid,
  pastEnd,
  formatOrdered,
} = require('../protocol/sequence');
const { announceExpunged } = require('./expunge');
const { requireTarget } = require('../listing');

/**
 * @param {import('./session').Session} s
 * @param {object[]} args sequence set, mailbox
 * @param {{byUid: boolean, move: boolean}} o
 */
async function runCopy(s, args, o) {
  if (args.length !== 2) throw bad('Expected a sequence set and a mailbox');
  let ranges;
  try {
    ranges = parseSequenceSet(astring(args[0], 'sequence set'));
  } catch (err) {
    throw bad(err.message);
  }
  const target = mailboxArg(args[1]);
  const v = s.view;
  if (o.move && v.readOnly) throw no('Mailbox is read-only', 'READ-ONLY');
  await requireTarget(s, target);
  if (!o.byUid && pastEnd(ranges, v.total)) throw bad('Invalid message sequence number');
  const seqs = o.byUid ? resolveUid(ranges, v.uids) : resolveSeq(ranges, v.total);
  if (!seqs.length) {
    if (!o.byUid) throw bad('No messages in sequence set');
    return { text: 'No messages' };
  }
  const uids = seqs.map((n) => v.uidAt(n));
  const res = o.move
    ? await s.backend.move(v.name, uids, target)
    : await s.backend.copy(v.name, uids, target);
  const map = (res && res.map) || [];
  const code = map.length
    ? `COPYUID ${res.uidvalidity} ${formatOrdered(map.map((p) => Number(p[0])))} ${formatOrdered(map.map((p) => Number(p[1])))}`
    : null;
  if (o.move) {
    // RFC 6851 4.3: COPYUID goes in an untagged OK before the expunges.
    if (code) s.untagged([atom(`OK [${code}] Moved`)]);
    announceExpunged(s, map.length ? map.map((p) => Number(p[0])) : uids);
    return { text: 'MOVE completed' };
  }
  return { code, text: 'COPY completed' };
}

/** COPY (RFC 3501 6.4.7) with COPYUID; MOVE (move.js) and the UID forms (uid.js) call runCopy. */
module.exports = {
  name: 'COPY',
  states: ['selected'],
  usesView: true,
  expunges: false,
  run: (s, cmd) => runCopy(s, cmd.args, { byUid: false, move: false }),
  runCopy,
};
