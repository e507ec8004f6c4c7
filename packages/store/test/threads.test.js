'use strict';

const { threadIds, baseSubject } = require('@mailgate/store');

/* jwz threading, the pure part: which messages share a thread id. */

const m = (key, o = {}) => ({ key, subject: 'x', date: `2002-01-0${key.length}T00:00:00Z`, ...o });
const groups = (msgs) => {
  const ids = threadIds(msgs);
  const by = new Map();
  for (const x of msgs) {
    const id = ids.get(x.key);
    by.set(id, [...(by.get(id) || []), x.key]);
  }
  return [...by.values()].map((g) => g.sort()).sort((a, b) => (a[0] < b[0] ? -1 : 1));
};

test('replies join what they reference, through References and In-Reply-To', () => {
  expect(
    groups([
      m('a', { messageId: '<A@x>', subject: 'Plan' }),
      m('b', { messageId: '<B@x>', inReplyTo: '<A@x>', subject: 'Re: Plan' }),
      m('c', { messageId: '<C@x>', refs: ['<A@x>', '<B@x>'], subject: 'Re: Plan' }),
      m('d', { messageId: '<D@x>', subject: 'Other' }),
    ]),
  ).toEqual([['a', 'b', 'c'], ['d']]);
});

test('two replies to a message that is not stored share a thread, whatever the order', () => {
  const msgs = [
    m('r2', { messageId: '<R2@x>', refs: ['<Gone@x>', '<R1@x>'], subject: 'Re: lost' }),
    m('r1', { messageId: '<R1@x>', inReplyTo: '<Gone@x>', subject: 'Re: lost' }),
  ];
  expect(groups(msgs)).toEqual([['r1', 'r2']]);
  expect(groups([...msgs].reverse())).toEqual([['r1', 'r2']]);
});

test('ids are case- and bracket-insensitive; the thread id does not depend on arrival order', () => {
  const a = m('a', { messageId: '<Root@Example.ORG>', subject: 'Hi' });
  const b = m('b', { messageId: '<kid@x>', inReplyTo: 'root@example.org', subject: 'Re: Hi' });
  const one = threadIds([a, b]);
  const two = threadIds([b, a]);
  expect(one.get('a')).toBe(one.get('b'));
  expect(two.get('a')).toBe(one.get('a'));
  expect(one.get('a')).toMatch(/^[0-9a-f]{16}$/);
});

test('subject fallback: a reply without references joins the thread of its base subject', () => {
  expect(
    groups([
      m('a', { messageId: '<A@x>', subject: 'Budget 2002' }),
      m('bb', { messageId: '<B@x>', subject: 'RE: Re: budget 2002' }),
      m('ccc', { messageId: '<C@x>', subject: 'Budget 2002' }),
      m('dddd', { messageId: '<D@x>', subject: '' }),
      m('eeeee', { messageId: '<E@x>', subject: 'Re:' }),
    ]),
  ).toEqual([['a', 'bb'], ['ccc'], ['dddd'], ['eeeee']]);
});

test('messages without Message-ID stay themselves; copies (the same Message-ID) share a thread', () => {
  expect(
    groups([
      m('a', { subject: 'one' }),
      m('bb', { subject: 'two' }),
      m('ccc', { messageId: '<Same@x>', subject: 'three' }),
      m('dddd', { messageId: '<Same@x>', subject: 'four' }),
    ]),
  ).toEqual([['a'], ['bb'], ['ccc', 'dddd']]);
});

test('the subject step does not depend on the order messages come in', () => {
  // Two root sets with the same base subject that are not replies, and a reply: the reply
  // joins the oldest, whatever order the rows are read in.
  const msgs = [
    m('x', { messageId: '<X@x>', subject: 'Report', date: '2002-01-03T00:00:00Z' }),
    m('y', { messageId: '<Y@x>', subject: 'Report', date: '2002-01-01T00:00:00Z' }),
    m('z', { messageId: '<Z@x>', subject: 'Re: Report', date: '2002-01-05T00:00:00Z' }),
  ];
  const want = [['x'], ['y', 'z']];
  expect(groups(msgs)).toEqual(want);
  expect(groups([...msgs].reverse())).toEqual(want);
  expect(groups([msgs[2], msgs[0], msgs[1]])).toEqual(want);
});

test('base subject drops reply and forward prefixes', () => {
  expect(baseSubject('Re: FWD: re[2]:  Budget   plan')).toBe('budget plan');
  expect(baseSubject(null)).toBe('');
});
