'use strict';

/*
 * crlf.js `own` (issue 35, first fetch): the CRLF form IMAP FETCH serves gets an allocation of
 * its own, so the server's body cache keeps that very Buffer instead of a copy; the bytes are
 * those of the default form. Pure.
 */

const { toCrlf } = require('../lib/crlf');

/** Reference: every LF not preceded by CR made CRLF, on a latin1 string. */
const reference = (buf) =>
  Buffer.from(buf.toString('latin1').replace(/(?<!\r)\n/g, '\r\n'), 'latin1');

const SAMPLES = [
  Buffer.from('From: a@b\nSubject: x\n\nbody\n'),
  Buffer.from('mixed\r\nends\nhere\r\n\n'),
  Buffer.from([0x0a, 0x00, 0xff, 0x0d, 0x0a, 0x0a, 0x80, 0x0d]),
  Buffer.from('no newline at all'),
  Buffer.from(`${'long line '.repeat(200)}\n`.repeat(30)),
];

test('own: the same bytes as the default form, in an allocation of exactly their size', () => {
  for (const raw of SAMPLES) {
    const want = reference(raw);
    const plain = toCrlf(raw);
    const own = toCrlf(raw, { own: true });
    expect(own.equals(want)).toBe(true);
    expect(plain.equals(want)).toBe(true);
    if (own !== raw) {
      // Not a slice of Node's shared 8 KiB pool (allocUnsafe for small sizes).
      expect(own.byteOffset).toBe(0);
      expect(own.buffer.byteLength).toBe(own.length);
    }
  }
});

test('own: a message already in CRLF is returned as it is (no copy)', () => {
  const crlf = Buffer.from('a\r\nb\r\n');
  expect(toCrlf(crlf, { own: true })).toBe(crlf);
});
