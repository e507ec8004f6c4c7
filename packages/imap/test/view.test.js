'use strict';

const { MailboxView } = require('../lib/view');

// The selected-mailbox view: sequence numbers, expunge order (RFC 3501 7.4.1), and uid arrays
// shared between sessions that hold the same uids (IDLE memory, issue 12).
const view = (uids) =>
  new MailboxView({
    name: 'INBOX',
    readOnly: false,
    uidvalidity: 7,
    uidnext: 100,
    highestModseq: 1,
    uids,
  });

test('views of the same uids share one array; equal changes share the next one', () => {
  const a = view([3, 5, 8, 13, 21]);
  const b = view([3, 5, 8, 13, 21]);
  const c = view([3, 5, 8, 13]);
  expect(a.uids).toBe(b.uids);
  expect(a.uids).not.toBe(c.uids);
  expect(a.add([34, 55])).toBe(2);
  expect(b.add([55, 34, 21])).toBe(2); // known and repeated uids are ignored
  expect(a.uids).toBe(b.uids);
  expect([...a.uids]).toEqual([3, 5, 8, 13, 21, 34, 55]);
  expect(a.uidnext).toBe(100);
  expect(a.add([101])).toBe(1);
  expect(a.uidnext).toBe(102);
  expect(b.uids).toHaveLength(7); // b's view is not changed by a's
});

test('remove answers the sequence numbers to announce, highest first, each valid in turn', () => {
  const a = view([3, 5, 8, 13, 21]);
  const b = view([3, 5, 8, 13, 21]);
  expect(a.remove([5, 21, 99, 5])).toEqual([5, 2]);
  expect([...a.uids]).toEqual([3, 8, 13]);
  expect(a.seqOf(13)).toBe(3);
  expect(a.uidAt(2)).toBe(8);
  expect(a.seqOf(5)).toBe(0);
  expect(a.total).toBe(3);
  expect(b.total).toBe(5);
  b.remove([21, 5]);
  expect(b.uids).toBe(a.uids);
  expect(a.remove([77])).toEqual([]);
});
