'use strict';

/*
 * EXPUNGE, UID EXPUNGE (RFC 4315 2.1) and MOVE's removal: the service expunges, this sends
 * the EXPUNGE (or, with QRESYNC, VANISHED) responses and updates the view.
 */

const { atom } = require('../protocol/writer');
const { formatSet } = require('../protocol/sequence');
const { arity } = require('../protocol/args');
const { no } = require('../errors');
const { expungeResult, allRows } = require('../mail-data');
const { mailboxScope } = require('../cache');

// More \Deleted messages than this are expunged by the store's own scan (the service bounds
// the uids of one operation, MAILGATE_MAX_UIDS; a scan costs no more than that many lookups).
const BY_UID_MAX = 10000;

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
  // Their bytes are never served again from this view: the server's copy goes (body-cache.js).
  if (s.server.bodyCache) s.server.bodyCache.dropUids(s.user, mailboxScope(s.user, v), uids);
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
    const v = s.view;
    if (v.readOnly) throw no('Mailbox is read-only', 'READ-ONLY');
    // The \Deleted messages as the list view has them at the state the session's check just
    // read (exact by modseq; new mail the view has not listed yet included): the service
    // expunges those uids, still only where \Deleted is set, by the primary key. Asked without
    // uids, the store looked for \Deleted in every row of the user's partition: a sequential
    // scan of ~85 MB for the large Enron mailbox and a copy of it, 0.7 s on a loaded machine
    // (issue 35.4). A \Deleted another session sets after that check is concurrent with this
    // EXPUNGE, and either order is one RFC 3501 allows; the next EXPUNGE removes it.
    const rows = await allRows(s.backend, v.name, s.knownStatus());
    const marked = [];
    for (const row of rows) {
      if ((row.flags || []).includes('\\Deleted')) marked.push(Number(row.uid));
    }
    if (!marked.length) return;
    const { uids, highestModseq } = expungeResult(
      await s.backend.expunge(v.name, marked.length <= BY_UID_MAX ? marked : undefined),
    );
    announceExpunged(s, uids, highestModseq);
  },
  announceExpunged,
};
