'use strict';

// DELETE (RFC 3501 6.3.4): INBOX cannot be deleted. The server's cached bytes of the mailbox's
// messages (body-cache.js) and its packed list-view reads (list-view-cache.js) go with it:
// they are keyed by its identity, read first when this user has any cached (a deleted mailbox's entries could never be asked for again, but would
// hold memory until evicted).
const { arity, mailboxArg } = require('../protocol/args');
const { no } = require('../errors');

module.exports = {
  name: 'DELETE',
  states: ['auth', 'selected'],
  async run(s, cmd) {
    arity(cmd, 1);
    const name = mailboxArg(cmd.args[0]);
    if (name === 'INBOX') throw no('INBOX cannot be deleted', 'CANNOT');
    if (s.view && s.view.name === name) throw no('Mailbox is selected', 'INUSE');
    const bodies = s.server.bodyCache;
    const lists = s.server.listViewCache;
    let identity = null;
    if ((bodies && bodies.holds(s.user)) || (lists && lists.holds(s.user))) {
      const st = await s.backend.status(name, { counts: false }).catch(() => null);
      identity = st && st.identity != null ? String(st.identity) : null;
    }
    await s.backend.deleteMailbox(name);
    if (identity === null) return;
    if (bodies) bodies.dropMailbox(s.user, identity);
    if (lists) lists.dropMailbox(s.user, identity);
  },
};
