'use strict';

/*
 * EXPUNGE, UID EXPUNGE (RFC 4315 2.1) and MOVE's removal: the service expunges, this sends
 * the EXPUNGE (or, with QRESYNC, VANISHED) responses and updates the view.
 */

const { atom } = require('./writer');
const { formatSet } = require('./sequence');

/**
 * Announces uids removed from the selected mailbox.
 * @param {import('./session').Session} s
 * @param {number[]} uids
 * @param {number|null} [highestModseq] what this session's own expunge left the mailbox at
 *   (the service's answer): once announced, the view is current up to it (view.noteOwnModseq)
 */
function announceExpunged(s, uids, highestModseq = null) {
  const v = s.view;
  const present = uids.map(Number).filter((u) => v.seqOf(u));
  if (present.length) {
    if (s.enabled.has('QRESYNC')) {
      v.remove(present);
      s.untagged([atom('VANISHED'), atom(formatSet(present))]);
    } else {
      for (const seq of v.remove(present)) s.untagged([seq, atom('EXPUNGE')]);
    }
  }
  if (highestModseq != null && uids.length) v.noteOwnModseq(highestModseq);
}

module.exports = { announceExpunged };
