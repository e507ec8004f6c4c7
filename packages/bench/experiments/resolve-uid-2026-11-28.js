'use strict';

/*
 * IMAP `UID FETCH n` resolves n against the selected view's uids (imap protocol/sequence.js
 * resolveUid). Before issue 35's change it merge-walked every uid below n; now a binary search
 * per range. Times both on a 21,282-uid view (the bench's large mailbox), n at random
 * positions, interleaved, 20,000 calls each; the old function is copied here for the
 * comparison only.
 *
 *   nice node packages/bench/experiments/resolve-uid-2026-11-28.js
 */

const { parseSequenceSet, resolveUid } = require('../../imap/lib/protocol/sequence');

function normalise(ranges, max) {
  const fixed = ranges.map(([lo, hi]) => {
    const a = lo === Infinity ? max : lo;
    const b = hi === Infinity ? max : hi;
    return a <= b ? [a, b] : [b, a];
  });
  fixed.sort((x, y) => x[0] - y[0]);
  const out = [];
  for (const r of fixed) {
    const last = out[out.length - 1];
    if (last && r[0] <= last[1] + 1) last[1] = Math.max(last[1], r[1]);
    else out.push([r[0], r[1]]);
  }
  return out;
}

function mergeWalk(ranges, uids) {
  if (!uids.length) return [];
  const merged = normalise(ranges, uids[uids.length - 1]);
  const out = [];
  let r = 0;
  for (let i = 0; i < uids.length && r < merged.length; i++) {
    const u = uids[i];
    while (r < merged.length && merged[r][1] < u) r++;
    if (r < merged.length && u >= merged[r][0]) out.push(i + 1);
  }
  return out;
}

const N = 21282;
const uids = Uint32Array.from({ length: N }, (_, i) => i + 1);
const t = { mergeWalk: [], binarySearch: [] };
for (let i = 0; i < 20000; i++) {
  const ranges = parseSequenceSet(String(1 + Math.floor(Math.random() * N)));
  for (const [k, fn] of i % 2
    ? [
        ['binarySearch', resolveUid],
        ['mergeWalk', mergeWalk],
      ]
    : [
        ['mergeWalk', mergeWalk],
        ['binarySearch', resolveUid],
      ]) {
    const t0 = process.hrtime.bigint();
    const r = fn(ranges, uids);
    t[k].push(Number(process.hrtime.bigint() - t0) / 1e3);
    if (r.length !== 1) throw new Error('one uid expected');
  }
}
const med = (a) => a.sort((x, y) => x - y)[a.length >> 1];
process.stdout.write(
  JSON.stringify({ uids: N, calls: 20000, medianMicroseconds: { mergeWalk: med(t.mergeWalk), binarySearch: med(t.binarySearch) } }) + '\n',
);
