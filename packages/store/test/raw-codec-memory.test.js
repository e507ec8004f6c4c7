'use strict';

const {
  CODEC,
  ASYNC_OVER,
  PACK_LIMIT,
  encodeRaw,
  encodeRawAsync,
  decodeRaw,
} = require('../lib/raw-codec');

// Review findings on the raw codec (issue 30.6): a prefix of a decompressed message must not
// keep the whole message alive, and a server's large appends must not compress on the event
// loop that runs every other session.

const wordy = (bytes) => {
  const words = ['meeting', 'gas', 'contract', 'price', 'Houston', 'schedule', 'please', 'the'];
  const parts = ['Subject: big\r\n\r\n'];
  let n = parts[0].length;
  for (let i = 0; n < bytes; i++) {
    const w = `${words[(i * 7) % words.length]}${i % 13 === 0 ? '\r\n' : ' '}`;
    parts.push(w);
    n += w.length;
  }
  return Buffer.from(parts.join('')).subarray(0, bytes);
};

test('a prefix of a compressed message holds only the prefix, not the whole message', () => {
  const raw = wordy(PACK_LIMIT);
  const stored = encodeRaw(raw);
  expect(stored.raw_codec).toBe(CODEC.BROTLI);
  const prefix = 64 * 1024;
  const got = decodeRaw(stored.raw, stored.raw_codec, prefix);
  expect(got.equals(raw.subarray(0, prefix))).toBe(true);
  // A view into the decompressed megabyte would report its whole ArrayBuffer here.
  expect(got.buffer.byteLength).toBeLessThan(raw.length);
});

test('a large message is compressed off the event loop, with the same stored form', async () => {
  const raw = wordy(PACK_LIMIT);
  const order = [];
  setImmediate(() => order.push('event loop turned'));
  const stored = await encodeRawAsync(raw);
  order.push('compressed');
  // Compressed on the thread pool: the loop ran other work meanwhile (a synchronous
  // compression finishes before any callback of the loop can run).
  expect(order).toEqual(['event loop turned', 'compressed']);
  expect(stored).toEqual(encodeRaw(raw));
  expect(decodeRaw(stored.raw, stored.raw_codec).equals(raw)).toBe(true);
});

test('small, empty and oversized messages take the same forms as encodeRaw', async () => {
  for (const raw of [
    Buffer.alloc(0),
    wordy(ASYNC_OVER),
    wordy(ASYNC_OVER + 1),
    wordy(PACK_LIMIT + 1),
  ]) {
    const got = await encodeRawAsync(raw);
    const want = encodeRaw(raw);
    expect(got.raw_codec).toBe(want.raw_codec);
    expect(got.raw.equals(want.raw)).toBe(true);
    expect(decodeRaw(got.raw, got.raw_codec).equals(raw)).toBe(true);
  }
});
