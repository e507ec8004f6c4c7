'use strict';

const path = require('node:path');
const { BoundedPool } = require('../lib');

const HANDLER = path.join(__dirname, 'fixtures', 'pool-handler.js');
let pool;
afterEach(() => pool && pool.close());

test('results come back in input order across threads', async () => {
  pool = new BoundedPool({ module: HANDLER, size: 2, timeMs: 5000 });
  const items = Array.from({ length: 7 }, (_, i) => ({ value: i }));
  const out = await pool.run(items);
  expect(out.map((r) => r.value)).toEqual([0, 1, 2, 3, 4, 5, 6]);
  expect(pool.replaced).toBe(0);
});

test('an item over the time budget is answered too-complex; the rest of its batch is retried', async () => {
  pool = new BoundedPool({ module: HANDLER, size: 1, timeMs: 300 });
  const items = [{ value: 'a' }, { spin: 60000, value: 'slow' }, { value: 'c' }];
  // The item spins for 60 s: that the batch is answered at all shows the budget cut it.
  const out = await pool.run(items);
  expect(out[0]).toEqual({ ok: true, value: 'a' });
  expect(out[1]).toMatchObject({ ok: false, reason: 'too-complex' });
  expect(out[1].detail).toMatch(/time budget of 300 ms/);
  expect(out[2]).toEqual({ ok: true, value: 'c' });
  expect(pool.replaced).toBe(1);
  // the replacement thread works
  expect(await pool.run([{ value: 'again' }])).toEqual([{ ok: true, value: 'again' }]);
});

test('an item over the heap cap kills its thread: too-complex, the thread replaced', async () => {
  pool = new BoundedPool({ module: HANDLER, size: 1, timeMs: 0, memoryMb: 32 });
  const out = await pool.run([{ value: 1 }, { hog: 400 }, { value: 3 }]);
  expect(out[0]).toEqual({ ok: true, value: 1 });
  expect(out[1]).toMatchObject({ ok: false, reason: 'too-complex' });
  expect(out[1].detail).toMatch(/memory budget of 32 MB/);
  expect(out[2]).toEqual({ ok: true, value: 3 });
  expect(pool.replaced).toBe(1);
});

test('a handler that throws is answered like a crash, never lost', async () => {
  pool = new BoundedPool({ module: HANDLER, size: 1, timeMs: 5000 });
  const out = await pool.run([{ throw: true }, { value: 2 }]);
  expect(out[0]).toMatchObject({ ok: false, reason: 'parse-failed' });
  expect(out[0].detail).toMatch(/handler failed/);
  expect(out[1]).toEqual({ ok: true, value: 2 });
});

test('size 0 runs inline', async () => {
  pool = new BoundedPool({ module: HANDLER, size: 0 });
  expect(await pool.run([{ value: 'x' }])).toEqual([{ ok: true, value: 'x' }]);
});

test('thread start-up is not parse time: a slow-loading thread does not fail its first items', async () => {
  // Before the fix the watchdog counted from dispatch, so every item of a fresh thread on a
  // loaded machine was "over budget" and each replacement thread failed the same way.
  pool = new BoundedPool({
    module: path.join(__dirname, 'fixtures', 'slow-load-handler.js'),
    size: 1,
    timeMs: 200,
  });
  const out = await pool.run([{ value: 1 }, { value: 2 }]);
  expect(out).toEqual([
    { ok: true, value: 1 },
    { ok: true, value: 2 },
  ]);
  expect(pool.replaced).toBe(0);
});
