'use strict';

const { seqSet } = require('../lib/commands/imap-losses');

/*
 * `bench imap-losses` sends its 1% and 20% samples as one sequence set each (a 20% set of the
 * large mailbox must stay within the servers' 64 KiB command line): consecutive numbers as
 * ranges, every number once, in order.
 */

test('seqSet writes runs as ranges and keeps every number', () => {
  expect(seqSet([1, 2, 3, 7, 9, 10])).toBe('1:3,7,9:10');
  expect(seqSet([5])).toBe('5');
  const nums = [];
  for (let i = 1; i <= 21282; i++) if (i % 5 !== 0) nums.push(i);
  const text = seqSet(nums);
  const back = [];
  for (const part of text.split(',')) {
    const [a, b] = part.split(':').map(Number);
    for (let n = a; n <= (b || a); n++) back.push(n);
  }
  expect(back).toEqual(nums);
  expect(text.length).toBeLessThan(64 * 1024);
});
