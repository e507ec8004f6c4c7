'use strict';

/*
 * raw-codec.js decodeRaw's output buffer (issue 35, first fetch): a brotli-coded message comes
 * back as one Buffer about its own size, not as a view of zlib's default 16 KiB chunk (which
 * kept 16 KiB alive per message and made the IMAP body cache copy it); byte-exact for every
 * codec and size, messages larger than the guess included. Pure: no database.
 */

const crypto = require('node:crypto');
const { encodeRaw, decodeRaw, CODEC, PACK_LIMIT } = require('../lib/raw-codec');

// Mail-like text: words of a seeded generator (brotli keeps ~0.4 of it, as of Enron mail).
const text = (n) => {
  let seed = 35;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
  let s = 'From: a@example.org\nSubject: test\n\n';
  while (s.length < n) {
    let w = '';
    for (let k = 2 + (next() % 8); k > 0; k--) w += String.fromCharCode(97 + (next() % 26));
    s += w + (next() % 12 ? ' ' : '\n');
  }
  return Buffer.from(s.slice(0, n));
};

test('a small brotli message decodes into an allocation about its size', () => {
  const raw = text(3000);
  const stored = encodeRaw(raw);
  expect(stored.raw_codec).toBe(CODEC.BROTLI);
  const out = decodeRaw(stored.raw, stored.raw_codec);
  expect(out.equals(raw)).toBe(true);
  expect(out.byteOffset).toBe(0);
  // zlib's default chunk was 16 KiB; the guess is 3.2× the stored size (+256), at least 1 KiB.
  expect(out.buffer.byteLength).toBeLessThan(16384);
  expect(out.buffer.byteLength).toBeLessThanOrEqual(Math.max(stored.raw.length * 3.2 + 257, 1024));
});

test('a message that compresses worse than the guess is not kept in a 3x allocation', () => {
  // An attachment in base64 (brotli keeps ~0.75 of it): the guess overshoots ~2.4×.
  for (const n of [4000, 41000, 205000]) {
    const b64 = crypto.randomBytes(n).toString('base64').replace(/.{76}/g, '$&\n');
    const raw = Buffer.from(`From: a@example.org\nSubject: pdf\n\n${b64}\n`);
    const stored = encodeRaw(raw);
    expect(stored.raw_codec).toBe(CODEC.BROTLI);
    const out = decodeRaw(stored.raw, stored.raw_codec);
    expect(out.equals(raw)).toBe(true);
    expect(out.buffer.byteLength).toBeLessThanOrEqual(
      Math.max(raw.length * 1.25, raw.length + 1024),
    );
  }
});

test('byte-exact for every codec and size: repetitive (beyond the guess), 8-bit, binary, large', () => {
  const cases = [
    Buffer.alloc(0),
    Buffer.from('x'),
    Buffer.from('a'.repeat(200000)), // compresses ~1000×: many chunks joined
    Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 131) % 256)), // 8-bit
    crypto.randomBytes(20000), // incompressible: stored as it is (codec 0)
    Buffer.concat([text(PACK_LIMIT), Buffer.from('tail\n')]), // over PACK_LIMIT: codec 0
    text(PACK_LIMIT - 10), // the largest brotli one
  ];
  for (const raw of cases) {
    const stored = encodeRaw(raw);
    const out = decodeRaw(stored.raw, stored.raw_codec);
    expect(out.equals(raw)).toBe(true);
    expect(decodeRaw(stored.raw, stored.raw_codec, 7).equals(raw.subarray(0, 7))).toBe(true);
  }
  expect(encodeRaw(crypto.randomBytes(20000)).raw_codec).toBe(CODEC.PLAIN);
  expect(encodeRaw(text(PACK_LIMIT + 1)).raw_codec).toBe(CODEC.PLAIN);
});
