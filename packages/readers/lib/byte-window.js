'use strict';

/**
 * Growable byte queue addressed by absolute stream offsets. The splitter keeps only the bytes of
 * the entry it is currently scanning here, so memory stays bounded by the largest message instead
 * of the file; appends are amortised O(1) (doubling) to survive 1-byte chunks on big messages.
 */
class ByteWindow {
  constructor() {
    this.buf = Buffer.alloc(0);
    this.start = 0;
    this.end = 0;
    /** Absolute offset of buf[start]. */
    this.base = 0;
  }

  /** @returns {number} number of buffered bytes */
  get length() {
    return this.end - this.start;
  }

  /** @returns {number} absolute offset just past the last buffered byte */
  get endAbs() {
    return this.base + this.end - this.start;
  }

  /**
   * Append a chunk.
   * @param {Buffer} chunk
   */
  append(chunk) {
    const n = chunk.length;
    if (n === 0) return;
    if (this.end + n > this.buf.length) {
      const len = this.length;
      // Compact only when the dead prefix is at least as large as the live data, otherwise grow:
      // keeps copying amortised linear even when entries are consumed a few bytes at a time.
      if (len + n <= this.buf.length && this.start >= len) {
        this.buf.copy(this.buf, 0, this.start, this.end);
      } else {
        const next = Buffer.allocUnsafe(Math.max(65536, 2 * (len + n)));
        this.buf.copy(next, 0, this.start, this.end);
        this.buf = next;
      }
      this.start = 0;
      this.end = len;
    }
    chunk.copy(this.buf, this.end);
    this.end += n;
  }

  /**
   * @param {number} abs absolute offset (must be buffered)
   * @returns {number} the byte
   */
  byteAt(abs) {
    return this.buf[this.start + abs - this.base];
  }

  /**
   * @param {number} byte
   * @param {number} fromAbs absolute offset to start searching at
   * @returns {number} absolute offset of the byte, or -1
   */
  indexOf(byte, fromAbs) {
    const from = this.start + Math.max(0, fromAbs - this.base);
    if (from >= this.end) return -1;
    const i = this.buf.subarray(0, this.end).indexOf(byte, from);
    return i < 0 ? -1 : i - this.start + this.base;
  }

  /**
   * Zero-copy view; only valid until the next append/consume.
   * @param {number} a absolute start
   * @param {number} b absolute end
   * @returns {Buffer}
   */
  view(a, b) {
    return this.buf.subarray(this.start + a - this.base, this.start + b - this.base);
  }

  /**
   * Owned copy of a range.
   * @param {number} a absolute start
   * @param {number} b absolute end
   * @returns {Buffer}
   */
  copy(a, b) {
    return Buffer.from(this.view(a, b));
  }

  /**
   * Drop everything before an absolute offset.
   * @param {number} toAbs
   */
  consume(toAbs) {
    if (toAbs <= this.base) return;
    this.start += toAbs - this.base;
    this.base = toAbs;
    if (this.start >= this.end) {
      this.start = 0;
      this.end = 0;
      // Give back the memory of an exceptionally large message instead of pinning it forever.
      if (this.buf.length > 4 * 1024 * 1024) this.buf = Buffer.alloc(0);
    }
  }
}

module.exports = { ByteWindow };
