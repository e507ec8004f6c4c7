'use strict';

/*
 * The selected mailbox as one session sees it (RFC 3501 2.3.1.2): the ordered uids that give
 * message sequence numbers, and the modseq up to which this session has been told about
 * changes. Only uids are held (not rows), as a Uint32Array (UIDs are 32-bit, RFC 3501 9
 * nz-number) that is never changed in place: sessions whose views hold the same uids share one
 * array (interned by content), and an expunge or new mail builds the next array, which the
 * other sessions told of the same change share again. 200 idle sessions on a 21,282-message
 * mailbox thus hold ~85 KB of uids, not 200 × 170 KB growing by half at the first new
 * message. Pure bookkeeping; reading the store is done by the caller.
 */

// Interned uid arrays by a hash of their content: weakly held, so an array no view uses
// any more is collected and its entry dropped.
const interned = new Map(); // `${length}:${hash}` -> WeakRef<Uint32Array>
// The arrays intern returned (the shared ones), so that interning one again is no pass over it.
const shared = new WeakSet();
const registry = new FinalizationRegistry((key) => {
  const ref = interned.get(key);
  if (ref && !ref.deref()) interned.delete(key);
});

function hashOf(a) {
  let h = 2166136261;
  for (let i = 0; i < a.length; i++) h = Math.imul(h ^ a[i], 16777619);
  return h >>> 0;
}

function sameUids(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The shared array equal to `a` (a itself when no view holds those uids yet).
 * @param {Uint32Array} a
 * @returns {Uint32Array}
 */
function intern(a) {
  // Already the shared one (a SELECT of an unchanged mailbox, select.js): no hash pass.
  if (shared.has(a)) return a;
  const key = `${a.length}:${hashOf(a)}`;
  const known = interned.get(key)?.deref();
  if (known && sameUids(known, a)) return known;
  interned.set(key, new WeakRef(a));
  registry.register(a, key);
  shared.add(a);
  return a;
}

class MailboxView {
  /**
   * @param {{name: string, readOnly: boolean, uidvalidity: number, identity?: string, uidnext: number, highestModseq: number, uids: ArrayLike<number>}} o
   *   identity: the backend's opaque mailbox identity, where it has one (pg)
   */
  constructor(o) {
    this.name = o.name;
    this.readOnly = o.readOnly;
    this.uidvalidity = o.uidvalidity;
    this.identity = o.identity == null ? null : String(o.identity);
    this.uidnext = o.uidnext;
    this.modseq = o.highestModseq;
    this.uids = intern(o.uids instanceof Uint32Array ? o.uids : Uint32Array.from(o.uids));
    // uid → modseq of changes this session made itself and already reported in its own
    // FETCH responses, so the next sync does not repeat them (STORE .SILENT stays silent).
    this.own = new Map();
    // \Recent for this session (RFC 3501 2.3.2, recent.js): the uids it was first told of,
    // and the ranges it claimed whose uids it may not have seen yet.
    this.recent = new Set();
    this.claims = [];
    this.claimedTo = 0;
    // Keywords announced in FLAGS (lower case → as first seen; keywords.js).
    this.keywords = new Map();
  }

  /** Records changes this session made and reported. */
  noteOwn(changed) {
    for (const c of changed) this.own.set(Number(c.uid), Number(c.modseq));
  }

  /**
   * Records the HIGHESTMODSEQ a change made by this session left the mailbox at, once the
   * session has told its client of that change (FETCH or EXPUNGE responses, or nothing for
   * .SILENT). When it is the view's modseq + 1, no other session changed the mailbox in
   * between: every change is stamped HIGHESTMODSEQ + 1 under the mailbox row lock (service
   * README, changesSince). The view is then current up to it, and the sync after the command
   * has nothing to read; without this it read the session's own changes back (changesSince:
   * a pass over the mailbox's rows, 20-40 ms on 21,282 messages after a 20% STORE or
   * EXPUNGE) only to skip them. A gap means another change came first: the sync reads it.
   * @param {number} highestModseq
   */
  noteOwnModseq(highestModseq) {
    const m = Number(highestModseq);
    if (m === this.modseq + 1) this.modseq = m;
  }

  get total() {
    return this.uids.length;
  }

  /** @returns {number} 1-based sequence number of uid, 0 when absent */
  seqOf(uid) {
    let lo = 0;
    let hi = this.uids.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const v = this.uids[mid];
      if (v === uid) return mid + 1;
      if (v < uid) lo = mid + 1;
      else hi = mid - 1;
    }
    return 0;
  }

  /** @returns {number} uid at 1-based sequence number */
  uidAt(seq) {
    return this.uids[seq - 1];
  }

  /**
   * Removes uids; returns the sequence numbers to announce, in the order EXPUNGE responses
   * must be sent (each number is valid after the previous removals, RFC 3501 7.4.1).
   * @param {number[]} uids
   * @returns {number[]}
   */
  remove(uids) {
    const out = [];
    const gone = new Set();
    // Announced from the highest down: each number stays valid after the ones before it.
    for (const uid of [...new Set(uids)].sort((a, b) => b - a)) {
      const seq = this.seqOf(uid);
      if (!seq) continue;
      gone.add(seq - 1);
      out.push(seq);
      this.recent.delete(uid);
    }
    if (!out.length) return out;
    const next = new Uint32Array(this.uids.length - gone.size);
    let j = 0;
    for (let i = 0; i < this.uids.length; i++) if (!gone.has(i)) next[j++] = this.uids[i];
    this.uids = intern(next);
    return out;
  }

  /**
   * Adds new uids (above every known one); returns how many were added.
   * @param {number[]} uids
   */
  add(uids) {
    const last = this.uids.length ? this.uids[this.uids.length - 1] : 0;
    const fresh = [...new Set(uids)].filter((u) => u > last).sort((a, b) => a - b);
    if (fresh.length) {
      const next = new Uint32Array(this.uids.length + fresh.length);
      next.set(this.uids);
      next.set(fresh, this.uids.length);
      this.uids = intern(next);
    }
    if (fresh.length) this.uidnext = Math.max(this.uidnext, fresh[fresh.length - 1] + 1);
    return fresh.length;
  }
}

module.exports = { MailboxView, internUids: intern };
