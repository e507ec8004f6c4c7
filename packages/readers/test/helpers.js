'use strict';

const { MboxSplitter, formatMboxEntry } = require('../lib');

/**
 * Feed a buffer to a fresh MboxSplitter in chunks and collect all entries.
 * @param {Buffer} buf
 * @param {object} [opts] MboxSplitter options
 * @param {(remaining: number) => number} [chunkSize] size of the next chunk
 * @returns {Promise<object[]>}
 */
function split(buf, opts = {}, chunkSize = (n) => n) {
  return new Promise((resolve, reject) => {
    const s = new MboxSplitter(opts);
    const out = [];
    s.on('data', (e) => out.push(e));
    s.on('error', reject);
    s.on('end', () => resolve(out));
    let pos = 0;
    while (pos < buf.length) {
      const n = Math.max(1, Math.min(chunkSize(buf.length - pos), buf.length - pos));
      s.write(buf.subarray(pos, pos + n));
      pos += n;
    }
    s.end();
  });
}

const { rng } = require('@mailgate/test-support/rng');

/** Entries → comparable plain objects. */
function plain(entries) {
  return entries.map((e) => ({
    ...e,
    fromLine: e.fromLine.toString('latin1'),
    raw: e.raw.toString('latin1'),
    trailer: e.trailer.toString('latin1'),
    original: e.original === null ? null : e.original.toString('latin1'),
  }));
}

/** Concatenate formatMboxEntry of all entries. */
function rebuild(entries) {
  return Buffer.concat(entries.map((e) => formatMboxEntry(e)));
}

/** Assert offsets/lengths tile the whole file. */
function expectTiling(entries, total) {
  let pos = 0;
  entries.forEach((e, i) => {
    expect(e.index).toBe(i);
    expect(e.offset).toBe(pos);
    pos += e.length;
  });
  expect(pos).toBe(total);
}

module.exports = { split, rng, plain, rebuild, expectTiling };
