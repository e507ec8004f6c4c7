'use strict';

// UID FETCH/SEARCH/STORE/COPY/MOVE/EXPUNGE (RFC 3501 6.4.8, RFC 4315 2.1 UID EXPUNGE).
const { bad, no } = require('../errors');
const { astring } = require('../protocol/args');
const { runFetch } = require('./fetch');
const { runSearch, sendSearch } = require('./search');
const { runStore } = require('./store');
const { runCopy } = require('./copy');
const { announceExpunged } = require('./expunge');
const { parseSequenceSet, resolveUid } = require('../protocol/sequence');
const { expungeResult } = require('../mail-data');

const SUB = {
  FETCH: (s, args) => runFetch(s, args, true),
  SEARCH: async (s, args) => sendSearch(s, await runSearch(s, args), true),
  STORE: (s, args) => runStore(s, args, true),
  COPY: (s, args) => runCopy(s, args, { byUid: true, move: false }),
  MOVE: (s, args) => runCopy(s, args, { byUid: true, move: true }),
  EXPUNGE: async (s, args) => {
    if (args.length !== 1) throw bad('UID EXPUNGE needs a uid set');
    if (s.view.readOnly) throw no('Mailbox is read-only', 'READ-ONLY');
    let ranges;
    try {
      ranges = parseSequenceSet(astring(args[0], 'uid set'));
    } catch (err) {
      throw bad(err.message);
    }
    const v = s.view;
    const uids = resolveUid(ranges, v.uids).map((n) => v.uidAt(n));
    if (!uids.length) return;
    // Only \Deleted messages among the set (RFC 4315 2.1): the service's expunge with uids
    // takes only those, in the statement that hides them (service README). No read of the
    // rows first: after a STORE of the set, that read was a list-cache delta of every
    // changed header row (10-150 ms for 4,256 messages), and its answer could be stale.
    const { uids: gone, highestModseq } = expungeResult(await s.backend.expunge(v.name, uids));
    announceExpunged(s, gone, highestModseq);
  },
};

module.exports = {
  name: 'UID',
  states: ['selected'],
  usesView: true,
  // UID FETCH checks the selected mailbox itself (runFetch), with its read of the bytes.
  checksView: (cmd) =>
    cmd.args[0] && cmd.args[0].type === 'atom' && /^FETCH$/i.test(cmd.args[0].value),
  // UID FETCH and UID SEARCH only read (session.js: the sync after them).
  readsOnly: (cmd) =>
    cmd.args[0] && cmd.args[0].type === 'atom' && /^(FETCH|SEARCH)$/i.test(cmd.args[0].value),
  async run(s, cmd) {
    const sub = cmd.args[0] && cmd.args[0].type === 'atom' ? cmd.args[0].value.toUpperCase() : '';
    const fn = SUB[sub];
    if (!fn) throw bad('Unknown UID command');
    const res = await fn(s, cmd.args.slice(1));
    return { ...(res || {}), text: (res && res.text) || `UID ${sub} completed` };
  },
};
