'use strict';

/*
 * Untagged updates for the selected mailbox (RFC 3501 7.3.1 EXISTS, 7.4.1 EXPUNGE, 7.4.2
 * FETCH; RFC 7162 3.2.10 VANISHED with QRESYNC): what other sessions (or this one) changed
 * since the view's modseq, read through the service's changesSince/status.
 */

const { atom } = require('./writer');
const { uidsAfter, flagsOf } = require('./mail-data');
const { formatSet } = require('./sequence');

/**
 * @param {import('./session').Session} s
 * @param {{expunges?: boolean, status?: object|null}} opts expunges: false while sequence
 *   numbers must hold still; status: the mailbox's status read earlier in this command, used
 *   instead of a new read (session.js: after a command that changed nothing)
 */
async function syncView(s, opts = {}) {
  const v = s.view;
  const be = s.backend;
  const status = opts.status || (await be.status(v.name, { counts: false }));
  if (s.view !== v) return;
  // Every change to a mailbox's messages moves its HIGHESTMODSEQ (RFC 7162 3.1.1; the store
  // stamps rows and mailbox in one transaction): an unmoved one means nothing to report, and
  // the per-command cost stays one status read instead of a scan for rows above the modseq.
  const moved = Number(status.highestModseq) > v.modseq || Number(status.uidnext) > v.uidnext;
  const changes = moved
    ? await be.changesSince(v.name, v.modseq)
    : { changed: [], expunged: [], highestModseq: status.highestModseq };
  if (s.view !== v) return;
  const gone = new Set([...(v.pendingExpunged || []), ...(changes.expunged || []).map(Number)]);
  v.pendingExpunged = null;
  if (gone.size) {
    if (opts.expunges === false) {
      v.pendingExpunged = [...gone];
    } else if (s.enabled.has('QRESYNC')) {
      const present = [...gone].filter((u) => v.seqOf(u));
      v.remove(present);
      if (present.length) s.untagged([atom('VANISHED'), atom(formatSet(present))]);
    } else {
      for (const seq of v.remove([...gone])) s.untagged([seq, atom('EXPUNGE')]);
    }
  }
  const last = v.uids.length ? v.uids[v.uids.length - 1] : 0;
  let fresh = [];
  if (Number(status.uidnext) > v.uidnext) fresh = await uidsAfter(be, v.name, last);
  const added = v.add(fresh.filter((u) => !gone.has(u)));
  v.uidnext = Math.max(v.uidnext, Number(status.uidnext));
  if (added) {
    s.untagged([v.total, atom('EXISTS')]);
    s.untagged([0, atom('RECENT')]);
  }
  const freshSet = new Set(fresh);
  for (const c of changes.changed || []) {
    const uid = Number(c.uid);
    if (freshSet.has(uid) || gone.has(uid)) continue;
    if (v.own.get(uid) === Number(c.modseq)) continue;
    const seq = v.seqOf(uid);
    if (!seq) continue;
    const items = [atom('UID'), uid, atom('FLAGS'), flagsOf(c).map(atom)];
    if (s.condstore) items.push(atom('MODSEQ'), [Number(c.modseq)]);
    s.untagged([seq, atom('FETCH'), items]);
  }
  v.own.clear();
  v.modseq = Math.max(v.modseq, Number(changes.highestModseq || status.highestModseq || 0));
}

module.exports = { syncView };
