'use strict';

const { parse, compileImap } = require('..');

const c = (q) => compileImap(parse(q));

test.each([
  ['from:ken subject:enron', { search: { from: 'ken', subject: 'enron' }, exact: true }],
  ['is:read -is:flagged', { search: { seen: true, not: { flagged: true } }, exact: true }],
  ['from:a OR to:b', { search: { or: [{ from: 'a' }, { to: 'b' }] }, exact: true }],
  ['happy', { search: { text: 'happy' }, exact: false }],
  ['larger:10k', { search: { larger: 10240 }, exact: false }],
  ['has:attachment', { search: { all: true }, exact: false }],
  ['', { search: { all: true }, exact: true }],
])('%s', (q, want) => {
  expect(c(q)).toEqual(want);
});

test('negated inexact terms widen to ALL (the result must stay a superset)', () => {
  expect(c('-has:attachment')).toEqual({ search: { all: true }, exact: false });
  expect(c('-happy from:x')).toEqual({ search: { from: 'x' }, exact: false });
});

test('repeated keys are kept as separate operands', () => {
  const r = c('from:a from:b');
  expect(r.exact).toBe(true);
  expect(r.search).toEqual({ from: 'a', not: { not: { from: 'b' } } });
});

test('dates are widened by a day (SENT* compare in the header zone)', () => {
  const r = c('on:2001-12-07');
  expect(r.exact).toBe(false);
  expect(r.search.sentSince.toISOString()).toBe('2001-12-06T00:00:00.000Z');
  expect(r.search.sentBefore.toISOString()).toBe('2001-12-09T00:00:00.000Z');
});
