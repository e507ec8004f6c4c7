'use strict';

const { createProgress } = require('../lib/progress');

// Issue 30.9: a resumed import's entries before its checkpoint are only re-hashed. They used
// to count as work done at import speed, so the rate was inflated and the ETA far too short.
function capture(isTTY) {
  const lines = [];
  return { isTTY, write: (s) => lines.push(s), lines };
}

test('rate and ETA count new work only; entries done before are shown apart', () => {
  let t = 0;
  const stream = capture(false);
  const p = createProgress({ label: 'import mh', stream, intervalMs: 1, now: () => t });
  p.setTotal(10000);
  // 9,000 entries an earlier run stored, re-checked in 1 s ...
  for (let i = 0; i < 9000; i++) p.skip(1, 100);
  t = 1000;
  // ... then 100 new ones in the next 2 s: 50 a second, 900 left → 18 s.
  for (let i = 0; i < 100; i++) {
    t += 20;
    p.tick(1, 100);
  }
  p.done();
  const last = JSON.parse(stream.lines[stream.lines.length - 1]);
  expect(last).toMatchObject({ count: 100, skipped: 9000, total: 10000, done: true });
  expect(last.rate).toBeCloseTo(50.5, 0); // first new entry at t=1020, the last at 3000
  const mid = JSON.parse(stream.lines[stream.lines.length - 2]);
  expect(mid.eta).toBeGreaterThan(15);
  expect(mid.eta).toBeLessThan(20);
});

test('with a byte total the ETA is the bytes left at the new bytes rate', () => {
  let t = 0;
  const stream = capture(false);
  const p = createProgress({ label: 'import mbox', stream, intervalMs: 1, now: () => t });
  p.setTotalBytes(1000000);
  p.skip(500, 500000); // half the file done by the killed run
  t = 500;
  p.tick(1, 1000);
  t = 1500;
  p.tick(99, 99000); // 100,000 new bytes in 1 s: 400,000 left → 4 s
  const last = JSON.parse(stream.lines[stream.lines.length - 1]);
  expect(last.eta).toBeCloseTo(4, 0);
  expect(last.skipped).toBe(500);
});

test('the terminal line names the entries done before', () => {
  let t = 0;
  const stream = capture(true);
  const p = createProgress({ label: 'import mh', stream, intervalMs: 1, now: () => t });
  p.setTotal(200);
  p.skip(150);
  t = 100;
  p.tick(1);
  t = 1100;
  p.tick(9);
  expect(stream.lines[stream.lines.length - 1]).toMatch(
    /import mh \[#+\.*\] 160\/200 msgs \(150 done before\) 10\/s .* ETA 4\.0s/,
  );
});
