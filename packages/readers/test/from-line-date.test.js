'use strict';

const { fromLineDate, makeFromLine } = require('../lib');

// INTERNALDATE of an mbox message: the From_ line's asctime date (read by import and by the
// legacy mbox backend alike).
test('fromLineDate reads asctime dates, with and without a numeric zone', () => {
  const at = (s) => fromLineDate(Buffer.from(s)).toISOString();
  expect(at('From alice@example.org Tue Mar  5 10:00:00 2002')).toBe('2002-03-05T10:00:00.000Z');
  expect(at('From a Tue Mar  5 10:00:00 2002 +0100')).toBe('2002-03-05T09:00:00.000Z');
  expect(at('From a Tue Mar 5 10:00:00 -0500 2002')).toBe('2002-03-05T15:00:00.000Z');
  expect(at('From a Sat Jan  3 01:05 1996')).toBe('1996-01-03T01:05:00.000Z');
  const d = new Date('2001-10-15T08:09:10Z');
  expect(fromLineDate(makeFromLine('bob@example.net', d)).toISOString()).toBe(d.toISOString());
});

test('fromLineDate answers null when there is no date', () => {
  expect(fromLineDate(null)).toBeNull();
  expect(fromLineDate(Buffer.alloc(0))).toBeNull();
  expect(fromLineDate(Buffer.from('From nobody'))).toBeNull();
  expect(fromLineDate(Buffer.from('From a Tue Foo  5 10:00:00 2002'))).toBeNull();
});
