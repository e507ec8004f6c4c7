'use strict';

/*
 * Owns the byte stream of one LMTP connection, client to server: cuts it into command lines,
 * a DATA message (dot-terminated, dot-unstuffed, RFC 5321 4.5.2) or BDAT chunks (RFC 3030),
 * as the session tells it which to expect next. Pure: no sockets, no store. It never holds
 * more than maxLine bytes of a command line, and never more than maxMessage bytes of a
 * message: the rest of an oversized message is read and dropped (only counted), so that the
 * stream stays in step and the session can answer 552 once the message ends.
 *
 * Pull model (PIPELINING, RFC 2920): the session feeds bytes with push() and takes one item at
 * a time with next(), after it has answered the previous command and set the mode; bytes of
 * pipelined commands wait in the buffer meanwhile.
 */

const CR = 13;
const LF = 10;
const DOT = 46;

const DEFAULT_LIMITS = Object.freeze({
  maxLine: 4096, // RFC 5321 4.5.3.1.4 asks for 512 octets; extensions make lines longer
  maxMessage: 50 * 1024 * 1024, // the SIZE announced in LHLO
});

class LmtpFramer {
  /** @param {Partial<typeof DEFAULT_LIMITS>} [limits] */
  constructor(limits = {}) {
    this.limits = { ...DEFAULT_LIMITS, ...limits };
    this.buf = Buffer.alloc(0);
    this.mode = 'line'; // 'line' | 'data' | 'chunk'
    this.skipLine = false;
    this.resetMessage();
  }

  resetMessage() {
    this.chunks = [];
    this.size = 0; // bytes of the message seen (kept or dropped)
    this.kept = 0;
    this.lineStart = true;
    this.prevCR = true; // the previous line ended with CRLF (the end marker needs it)
    this.chunkLeft = 0;
  }

  /** Bytes received and not taken yet (the session pauses the socket above a bound). */
  get buffered() {
    return this.buf.length;
  }

  /** @param {Buffer} chunk */
  push(chunk) {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
  }

  /** The next bytes are a DATA message, up to `CRLF.CRLF`. */
  expectData() {
    this.mode = 'data';
    this.resetMessage();
  }

  /**
   * The next n bytes are a BDAT chunk; `first` starts a new message, otherwise the chunk
   * continues the one being received.
   */
  expectChunk(n, first) {
    if (first) this.resetMessage();
    this.mode = 'chunk';
    this.chunkLeft = n;
  }

  /**
   * The message received so far (DATA or all BDAT chunks), null when it went over maxMessage.
   * @returns {{raw: Buffer|null, size: number}}
   */
  takeMessage() {
    const raw = this.size > this.limits.maxMessage ? null : Buffer.concat(this.chunks, this.kept);
    const size = this.size;
    this.resetMessage();
    return { raw, size };
  }

  keep(bytes) {
    this.size += bytes.length;
    if (this.size <= this.limits.maxMessage) {
      this.chunks.push(bytes);
      this.kept += bytes.length;
    } else if (this.chunks.length) {
      this.chunks = []; // over the limit: drop what was kept too
      this.kept = 0;
    }
  }

  /**
   * The next complete item, or null when more bytes are needed:
   * - `{type: 'line', text}` a command line without its CRLF (latin1)
   * - `{type: 'toolong'}` a command line over maxLine (its bytes are dropped)
   * - `{type: 'data'}` the DATA message ended (takeMessage() has it); mode is `line` again
   * - `{type: 'chunk'}` the BDAT chunk is complete; mode is `line` again
   * @returns {object|null}
   */
  next() {
    if (this.mode === 'data') return this.nextData();
    if (this.mode === 'chunk') return this.nextChunk();
    for (;;) {
      const nl = this.buf.indexOf(LF);
      if (nl < 0) {
        if (this.buf.length > this.limits.maxLine) {
          const first = !this.skipLine;
          this.buf = Buffer.alloc(0);
          this.skipLine = true;
          if (first) return { type: 'toolong' };
        }
        return null;
      }
      let end = nl;
      if (end > 0 && this.buf[end - 1] === CR) end--;
      const line = this.buf.toString('latin1', 0, end);
      this.buf = this.buf.subarray(nl + 1);
      if (this.skipLine) {
        // The end of a line already answered as too long.
        this.skipLine = false;
        continue;
      }
      if (end > this.limits.maxLine) return { type: 'toolong' };
      return { type: 'line', text: line };
    }
  }

  nextChunk() {
    if (this.chunkLeft > 0) {
      if (!this.buf.length) return null;
      const n = Math.min(this.chunkLeft, this.buf.length);
      this.keep(this.buf.subarray(0, n));
      this.buf = this.buf.subarray(n);
      this.chunkLeft -= n;
      if (this.chunkLeft > 0) return null;
    }
    this.mode = 'line';
    return { type: 'chunk' };
  }

  nextData() {
    for (;;) {
      const b = this.buf;
      if (this.lineStart) {
        if (!b.length) return null;
        if (b[0] === DOT) {
          if (b.length < 3 && !(b.length === 2 && b[1] !== CR)) return null;
          if (this.prevCR && b[1] === CR && b[2] === LF) {
            this.buf = b.subarray(3);
            this.mode = 'line';
            return { type: 'data' };
          }
          this.buf = b.subarray(1); // dot-stuffing (RFC 5321 4.5.2): drop the first dot
        }
        this.lineStart = false;
        continue;
      }
      const nl = b.indexOf(LF);
      if (nl < 0) {
        // A line without its end yet: keep its bytes but the last one (a CR may end it).
        if (b.length > 1) {
          this.keep(b.subarray(0, b.length - 1));
          this.buf = b.subarray(b.length - 1);
        }
        return null;
      }
      this.keep(b.subarray(0, nl + 1));
      this.prevCR = nl > 0 ? b[nl - 1] === CR : this.lastKeptCR();
      this.buf = b.subarray(nl + 1);
      this.lineStart = true;
    }
  }

  /** Whether the byte kept last is a CR (a line whose CR and LF arrived in two pushes). */
  lastKeptCR() {
    const c = this.chunks[this.chunks.length - 1];
    return Boolean(c && c.length && c[c.length - 1] === CR);
  }
}

module.exports = { LmtpFramer, DEFAULT_LIMITS };
