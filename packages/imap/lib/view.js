'use strict';

/*
 * The selected mailbox as one session sees it (RFC 3501 2.3.1.2): the ordered uids that give
 * message sequence numbers, and the modseq up to which this session has been told about
 * changes. Only uids are held (not rows), so 200 idle sessions on a 21,282-message mailbox
 * cost ~200 × 170 KB. Pure bookkeeping; reading the store is done by the caller.
 */

class MailboxView {
  /**
   * @param {{name: string, readOnly: boolean, uidvalidity: number, uidnext: number, highestModseq: number, uids: number[]}} o
   */
  constructor(o) {
    this.name = o.name;
    this.readOnly = o.readOnly;
    this.uidvalidity = o.uidvalidity;
    this.uidnext = o.uidnext;
    this.modseq = o.highestModseq;
    this.uids = o.uids;
    // uid → modseq of changes this session made itself and already reported in its own
    // FETCH responses, so the next sync does not repeat them (STORE .SILENT stays silent).
    this.own = new Map();
  }

  /** Records changes this session made and reported. */
  noteOwn(changed) {
    for (const c of changed) this.own.set(Number(c.uid), Number(c.modseq));
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
    for (const uid of [...uids].sort((a, b) => b - a)) {
      const seq = this.seqOf(uid);
      if (!seq) continue;
      this.uids.splice(seq - 1, 1);
      out.push(seq);
    }
    return out;
  }

  /**
   * Adds new uids (above every known one); returns how many were added.
   * @param {number[]} uids
   */
  add(uids) {
    const last = this.uids.length ? this.uids[this.uids.length - 1] : 0;
    const fresh = [...new Set(uids)].filter((u) => u > last).sort((a, b) => a - b);
    for (const u of fresh) this.uids.push(u);
    if (fresh.length) this.uidnext = Math.max(this.uidnext, fresh[fresh.length - 1] + 1);
    return fresh.length;
  }
}

module.exports = { MailboxView };
