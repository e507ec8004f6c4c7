'use strict';

const {
  parseSequenceSet,
  resolveSeq,
  resolveUid,
  formatSet,
  SequenceError,
} = require('../lib/sequence');

describe('sequence sets', () => {
  test('parse ranges, reversed ranges and *', () => {
    expect(parseSequenceSet('1:3,7,9:*,5:4')).toEqual([
      [1, 3],
      [7, 7],
      [9, Infinity],
      [4, 5],
    ]);
  });

  test.each(['', '0', '1:0', 'a', '1,,2', '1:2:3', '4294967296', '-1'])('%j is invalid', (t) => {
    expect(() => parseSequenceSet(t)).toThrow(SequenceError);
  });

  test('message numbers resolve against the view size, * is the last message', () => {
    expect(resolveSeq(parseSequenceSet('2:*'), 4)).toEqual([2, 3, 4]);
    expect(resolveSeq(parseSequenceSet('3,1:2,2'), 4)).toEqual([1, 2, 3]);
    expect(resolveSeq(parseSequenceSet('9:10'), 4)).toEqual([]);
    expect(resolveSeq(parseSequenceSet('*'), 0)).toEqual([]);
  });

  test('uid sets select existing uids only; * is the highest uid (RFC 3501 6.4.8)', () => {
    const uids = [3, 5, 10, 11, 40];
    expect(resolveUid(parseSequenceSet('1:*'), uids)).toEqual([1, 2, 3, 4, 5]);
    expect(resolveUid(parseSequenceSet('4:10,40'), uids)).toEqual([2, 3, 5]);
    expect(resolveUid(parseSequenceSet('100:*'), uids)).toEqual([5]);
    expect(resolveUid(parseSequenceSet('6:9'), uids)).toEqual([]);
    expect(resolveUid(parseSequenceSet('1:4294967295'), uids)).toHaveLength(5);
  });

  test('formatSet compacts runs', () => {
    expect(formatSet([5, 1, 2, 3, 9, 10])).toBe('1:3,5,9:10');
  });
});
