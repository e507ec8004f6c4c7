'use strict';

const {
  parseSequenceSet,
  resolveSeq,
  resolveUid,
  formatSet,
  inSet,
  compileSet,
  SequenceError,
} = require('../lib/protocol/sequence');

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

  test('UID FETCH n on a large view reads a few uids, not the whole view (issue 35)', () => {
    // 100,000 uids with gaps; index reads counted through a proxy (work done, not time).
    const arr = Uint32Array.from({ length: 100000 }, (_, i) => 2 * i + 1);
    let reads = 0;
    const uids = new Proxy(arr, {
      get(t, k) {
        if (typeof k === 'string' && /^\d+$/.test(k)) reads++;
        const v = t[k];
        return typeof v === 'function' ? v.bind(t) : v;
      },
    });
    expect(resolveUid(parseSequenceSet('150001'), uids)).toEqual([75001]);
    // The merge walk read ~75,000 of them (every uid below the one asked for).
    expect(reads).toBeLessThan(100);
    reads = 0;
    expect(resolveUid(parseSequenceSet('199990:*,3,150000'), uids)).toEqual([
      2, 99996, 99997, 99998, 99999, 100000,
    ]);
    expect(reads).toBeLessThan(200);
  });

  test('uid sets resolve as a plain membership filter would, on random views and sets', () => {
    let seed = 7;
    const rnd = (n) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let round = 0; round < 300; round++) {
      const view = [...new Set(Array.from({ length: rnd(60) }, () => 1 + rnd(200)))].sort(
        (a, b) => a - b,
      );
      const parts = Array.from({ length: 1 + rnd(5) }, () => {
        const a = 1 + rnd(220);
        const kind = rnd(4);
        if (kind === 0) return String(a);
        if (kind === 1) return `${a}:*`;
        return `${a}:${1 + rnd(220)}`;
      });
      const ranges = parseSequenceSet(parts.join(','));
      const max = view.length ? view[view.length - 1] : 0;
      const want = [];
      view.forEach((u, i) => {
        if (
          ranges.some(([lo, hi]) => {
            const a = lo === Infinity ? max : lo;
            const b = hi === Infinity ? max : hi;
            return u >= Math.min(a, b) && u <= Math.max(a, b);
          })
        )
          want.push(i + 1);
      });
      expect(resolveUid(ranges, view)).toEqual(want);
    }
  });

  test('formatSet compacts runs', () => {
    expect(formatSet([5, 1, 2, 3, 9, 10])).toBe('1:3,5,9:10');
  });
});

describe('compiled sets (issue 29 item 5: normalised once)', () => {
  test('9,999 copies of 1:* become one range; membership is the same as inSet', () => {
    const ranges = parseSequenceSet(Array(9999).fill('1:*').join(','));
    const set = compileSet(ranges, 20000);
    expect(set.ranges).toEqual([[1, 20000]]);
    expect([set.has(1), set.has(20000), set.has(20001), set.has(0)]).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });

  test('random sets agree with a test of every range, `*` as max or as the largest number', () => {
    let x = 7;
    const rnd = (n) => {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      return 1 + (x % n);
    };
    const wrong = [];
    for (let i = 0; i < 300; i++) {
      const text = Array.from({ length: rnd(6) }, () =>
        rnd(5) === 1 ? `${rnd(40)}:*` : `${rnd(40)}:${rnd(40)}`,
      ).join(',');
      const ranges = parseSequenceSet(text);
      const max = rnd(45);
      const starAsMax = ranges.map(([a, b]) => [
        a === Infinity ? max : a,
        b === Infinity ? max : b,
      ]);
      const set = compileSet(ranges, max);
      const open = compileSet(ranges, Infinity);
      for (let n = 1; n <= 50; n++) {
        if (set.has(n) !== inSet(starAsMax, n)) wrong.push([text, max, n]);
        if (open.has(n) !== inSet(ranges, n)) wrong.push([text, 'open', n]);
      }
    }
    expect(wrong).toEqual([]);
  });
});
