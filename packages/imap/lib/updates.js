'use strict';

/*
 * Untagged updates for the selected mailbox (RFC 3501 7.3.1 EXISTS, 7.4.1 EXPUNGE, 7.4.2
 * FETCH; RFC 7162 3.2.10 VANISHED with QRESYNC): what other sessions (or this one) changed
 * since the view's modseq, read through the service's changesSince/status.
 */

const { atom } = require('./protocol/writer');
const { uidsAfter, rowsFor, flagsOf } = require('./mail-data');
const { noteRecent } = require('./recent');
const { announceKeywords } = require('./keywords');
const { formatSet } = require('./protocol/sequence');
const { mailboxScope } = require('./cache');

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
  if (gone.size && s.server.bodyCache) {
    // Expunged: the server's copy of their bytes goes now (body-cache.js), also while the
    // EXPUNGE responses wait (a FETCH then reads the store, which no longer serves them).
    s.server.bodyCache.dropUids(s.user, mailboxScope(s.user, v), gone);
  }
  if (gone.size) {
    if (opts.expunges === false) {
      v.pendingExpunged = [...gone];
    } else if (s.enabled.has('QRESYNC')) {
      const present = [...gone].filter((u) => v.seqOf(u));
      v.remove(present);
      if (present.length) s.untagged([atom('VANISHED'), atom(formatSet(present))]);
    } else {
      for (const seq of v.remove([...gone])) {
        if (s.outputFull() && !(await s.backpressure())) return;
        s.untagged([seq, atom('EXPUNGE')]);
      }
    }
  }
  const last = v.uids.length ? v.uids[v.uids.length - 1] : 0;
  let fresh = [];
  // New uids are looked for when UIDNEXT moved, and also when HIGHESTMODSEQ moved while uids
  // above the last one seen were handed out: an import allocates a batch's uids before its
  // rows commit (store import-ops.js) and moves HIGHESTMODSEQ again at that commit, so a look
  // between the two saw UIDNEXT move with no row behind it.
  const gap = Number(status.uidnext) > last + 1;
  if (Number(status.uidnext) > v.uidnext || (moved && gap)) {
    fresh = await uidsAfter(be, v.name, last);
  }
  const newUids = fresh.filter((u) => !gone.has(u));
  const added = v.add(newUids);
  v.uidnext = Math.max(v.uidnext, Number(status.uidnext));
  if (added) {
    // New mail: this session may be the first told of it (\Recent), and it may carry a
    // keyword FLAGS has not listed yet (announced before the client can fetch it).
    await noteRecent(s, v, newUids);
    const rows = await rowsFor(be, v.name, newUids);
    if (s.view !== v) return;
    announceKeywords(
      s,
      v,
      [...rows.values()].map((r) => r.keywords),
    );
    s.untagged([v.total, atom('EXISTS')]);
    s.untagged([v.recent.size, atom('RECENT')]);
  }
  const freshSet = new Set(fresh);
  announceKeywords(
    s,
    v,
    (changes.changed || []).map((c) => c.keywords),
  );
  for (const c of changes.changed || []) {
    const uid = Number(c.uid);
    if (freshSet.has(uid) || gone.has(uid)) continue;
    if (v.own.get(uid) === Number(c.modseq)) continue;
    const seq = v.seqOf(uid);
    if (!seq) continue;
    const items = [atom('UID'), uid, atom('FLAGS'), flagsOf(c, v.recent).map(atom)];
    if (s.condstore) items.push(atom('MODSEQ'), [Number(c.modseq)]);
    // A client that does not read (an IDLE client gone quiet) must not make the server keep
    // every update for it: past maxUnsentBytes the session waits for its client to read, and
    // one that reads nothing for outputStallTimeout is disconnected (session.js backpressure).
    if (s.outputFull() && !(await s.backpressure())) return;
    s.untagged([seq, atom('FETCH'), items]);
  }
  v.own.clear();
  v.modseq = Math.max(v.modseq, Number(changes.highestModseq || status.highestModseq || 0));
}

module.exports = { syncView };
