'use strict';

const { EventEmitter } = require('node:events');
const { StreamGate } = require('../lib/streams');

// Issue 29.8: the stall check sampled `writableNeedDrain`, which a slow client that keeps
// reading leaves true at nearly every sample (the buffer refills as soon as it drains), so
// such clients were cut after 10-15 s. Progress is a 'drain'; only a client that never
// drains for stallMs is cut. Fake timers: the test does not depend on the machine's speed.

/** A response whose socket buffer is full at every sample. */
function fullResponse() {
  const res = new EventEmitter();
  res.writableNeedDrain = true;
  res.destroyed = false;
  res.destroy = () => {
    res.destroyed = true;
    res.emit('close');
  };
  return res;
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

test('a slow client that keeps draining the socket is never cut', () => {
  const gate = new StreamGate({ stallMs: 10000 });
  const res = fullResponse();
  let released = 0;
  gate.watch(res, () => released++);
  // Reads a buffer's worth every 3 s for a minute; the buffer is full again at every sample.
  for (let t = 0; t < 60000; t += 3000) {
    jest.advanceTimersByTime(3000);
    res.emit('drain');
  }
  expect(res.destroyed).toBe(false);
  expect(released).toBe(0);
  res.emit('close');
  expect(released).toBe(1);
});

test('a client that stops reading is cut after stallMs and its slot released', () => {
  const gate = new StreamGate({ stallMs: 10000 });
  const res = fullResponse();
  let released = 0;
  gate.watch(res, () => released++);
  res.emit('drain');
  jest.advanceTimersByTime(9000);
  expect(res.destroyed).toBe(false);
  jest.advanceTimersByTime(3000);
  expect(res.destroyed).toBe(true);
  expect(released).toBe(1);
});
