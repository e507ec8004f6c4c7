'use strict';

/*
 * EXPUNGE, UID EXPUNGE (RFC 4315 2.1) and MOVE's removal: the service expunges, this sends
 * the EXPUNGE (or, with QRESYNC, VANISHED) responses and updates the view.
 */

const { atom } = require('../protocol/writer');
const { formatSet } = require('../protocol/sequence');
const { arity } = require('../protocol/args');
const { no } = require('../errors');
const { expungeResult } = require('../mail-data');

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

/** EXPUNGE (RFC 3501 6.4.3): removes every \Deleted message of the selected mailbox. */
module.exports = {
  name: 'EXPUNGE',
  states: ['selected'],
  usesView: true,
  async run(s, cmd) {
    arity(cmd, 0);
    if (s.view.readOnly) throw no('Mailbox is read-only', 'READ-ONLY');
    const { uids, highestModseq } = expungeResult(await s.backend.expunge(s.view.name));
    announceExpunged(s, uids, highestModseq);
  },
  announceExpunged,
};
