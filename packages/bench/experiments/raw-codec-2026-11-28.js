'use strict';

/*
 * Issue 30.6, lever 1: which codec for raw sources compressed by the store (store/lib/raw-codec.js).
 * Every 4th message of the Enron set (path order), each compressed alone as the store does:
 * bytes, and CPU time to compress and to decompress (one message at a time, synchronous, as
 * an import batch and a FETCH do). Usage: node raw-codec-2026-11-28.js /tmp/corpus/enron/maildir
 */
const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');

function files(dir, out = []) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) files(p, out);
    else out.push(p);
  }
  return out;
}

const brotli = (q) => ({
  name: `brotli q${q}`,
  enc: (b) =>
    zlib.brotliCompressSync(b, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: q,
        [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: b.length,
      },
    }),
  dec: (b) => zlib.brotliDecompressSync(b),
});
const codecs = [
  brotli(3),
  brotli(4),
  brotli(5),
  brotli(6),
  brotli(7),
  { name: 'deflate 6', enc: (b) => zlib.deflateRawSync(b), dec: (b) => zlib.inflateRawSync(b) },
];

const all = files(process.argv[2]).sort();
const sample = all.filter((_, i) => i % 4 === 0).map((f) => fs.readFileSync(f));
const raw = sample.reduce((s, b) => s + b.length, 0);
const small = sample.filter((b) => b.length < 2032);
const out = { messages: sample.length, raw, under2k: small.length, codecs: [] };
for (const c of codecs) {
  let bytes = 0;
  let smallBytes = 0;
  const packed = [];
  let t = process.cpuUsage();
  for (const b of sample) packed.push(c.enc(b));
  const encUs = process.cpuUsage(t);
  t = process.cpuUsage();
  for (const p of packed) c.dec(p);
  const decUs = process.cpuUsage(t);
  for (let i = 0; i < sample.length; i++) {
    bytes += packed[i].length;
    if (sample[i].length < 2032) smallBytes += packed[i].length;
  }
  out.codecs.push({
    name: c.name,
    bytes,
    ratio: +(bytes / raw).toFixed(3),
    under2kBytes: smallBytes,
    encodeUsPerMessage: +((encUs.user + encUs.system) / sample.length).toFixed(1),
    decodeUsPerMessage: +((decUs.user + decUs.system) / sample.length).toFixed(1),
  });
}
console.log(JSON.stringify(out, null, 2));
