'use strict';

// The in-process caches of derived message data are keyed by the mailbox's identity, not by
// its name and UIDVALIDITY, which a re-created mailbox (or a kept upstream UIDVALIDITY) can
// repeat (issue 28 item 1: a deleted mailbox's ENVELOPE and header fields were served).
const { metaFor } = require('../lib/meta');
const { mailboxScope } = require('../lib/cache');
const { msg } = require('@mailgate/test-support/mail');

/** A backend holding one message at uid 1, with no kept metadata. */
function backendWith(raw) {
  return {
    getImapMeta: async () => new Map(),
    getRawMany: async (_name, uids) => new Map(uids.map((u) => [u, raw])),
  };
}

test('two mailboxes with the same name and UIDVALIDITY do not share cached metadata', async () => {
  const first = backendWith(msg({ subject: 'from the deleted mailbox' }));
  const second = backendWith(msg({ subject: 'from the new mailbox' }));
  const view = { name: 'Scope-Test', uidvalidity: 1234 };
  const a = await metaFor(first, { ...view, identity: '41' }, 'dana', [1]);
  expect(a.get(1).envelope).toContain('from the deleted mailbox');
  const b = await metaFor(second, { ...view, identity: '42' }, 'dana', [1]);
  expect(b.get(1).envelope).toContain('from the new mailbox');
  expect(b.get(1).fields).toContain('from the new mailbox');
});

test('mailboxScope names the identity when there is one, else the name', () => {
  const v = { name: 'X', uidvalidity: 7 };
  expect(mailboxScope('u', { ...v, identity: '1' })).not.toBe(
    mailboxScope('u', { ...v, identity: '2' }),
  );
  expect(mailboxScope('u', v)).not.toBe(mailboxScope('u', { ...v, name: 'Y' }));
});
