'use strict';

/*
 * Owns the byte stream of one connection, client to server: cuts it into complete commands
 * (a line plus any literals it announces, RFC 3501 4.3 / RFC 7888 LITERAL+) and enforces the
 * size limits. Pure: no sockets, no store; the session feeds bytes and acts on the events.
 * It never buffers more than maxLine bytes of command text plus maxLiteral bytes of one
 * literal (plus maxCommand in total), so a hostile client cannot make it grow without bound.
 */

const CR = 13;
const LF = 10;

// `{123}` or `{123+}` at the very end of a line (RFC 3501 literal, RFC 7888 non-synchronizing).
const LITERAL_RE = /\{(\d{1,20})(\+?)\}$/;

const DEFAULT_LIMITS = Object.freeze({
  maxLine: 64 * 1024, // command text between literals (RFC 7162 3.2.3 asks for >= 8192)
  maxLiteral: 64 * 1024 * 1024, // APPENDLIMIT
  maxCommand: 80 * 1024 * 1024, // one command, all lines and literals together
});

/**
 * Streaming command framer.
 *
 * feed(buffer) returns events:
 * - `{type: 'command', parts: Array<string|Buffer>}`: a complete command; strings are command
 *   text (latin1-decoded bytes, without CRLF), Buffers the literals between them
 * - `{type: 'continue'}`: a synchronizing literal was announced and accepted: send `+ …`
 * - `{type: 'error', tag, reason, text}`: the command was refused (reason: `line-too-long`,
 *   `literal-too-large`, `command-too-large`); its remaining bytes are skipped up to the end of
 *   the line that the client sends next
 * - `{type: 'fatal', text}`: the stream cannot be resynchronised (a non-synchronizing literal
 *   larger than the limit: RFC 7888 4 says to close the connection)

 * A continuation line that is not a command (IDLE's DONE, an AUTHENTICATE response) arrives as
 * a one-part `command`: the session, which knows it is waiting for one, takes it as a line.
 */
class CommandFramer {
  /** @param {Partial<typeof DEFAULT_LIMITS>} [limits] */
  constructor(limits = {}) {
    this.limits = { ...DEFAULT_LIMITS, ...limits };
    this.buf = Buffer.alloc(0);
    this.parts = [];
    this.total = 0;
    this.literalLeft = 0; // bytes of the current literal still to come
    this.literalChunks = [];
    this.skipLine = false; // discarding the rest of a refused command line
  }

  /**
   * @param {Buffer} chunk
   * @returns {object[]} events
   */
  feed(chunk) {
    const events = [];
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    for (;;) {
      if (this.literalLeft > 0) {
        if (!this.buf.length) break;
        const n = Math.min(this.literalLeft, this.buf.length);
        if (!this.skipLiteral) this.literalChunks.push(this.buf.subarray(0, n));
        this.buf = this.buf.subarray(n);
        this.literalLeft -= n;
        if (this.literalLeft === 0 && !this.skipLiteral) {
          this.parts.push(Buffer.concat(this.literalChunks));
          this.literalChunks = [];
        }
        if (this.literalLeft === 0) this.skipLiteral = false;
        continue;
      }
      const nl = this.buf.indexOf(LF);
      if (nl < 0) {
        if (this.buf.length > this.limits.maxLine) {
          // Keep discarding until the client ends the line; answer once.
          if (!this.skipLine) {
            const head = this.parts.length ? this.parts[0] : this.buf.toString('latin1', 0, 200);
            events.push(this.refuse('line-too-long', 'Command line too long', head));
          }
          this.parts = [];
          this.total = 0;
          this.buf = Buffer.alloc(0);
          this.skipLine = true;
        }
        break;
      }
      let end = nl;
      if (end > 0 && this.buf[end - 1] === CR) end--;
      const line = this.buf.toString('latin1', 0, end);
      this.buf = this.buf.subarray(nl + 1);
      if (this.skipLine) {
        // A refused command's tail: it may still announce literals the client will send
        // (non-synchronizing ones; synchronizing ones it waits for in vain and gets our BAD).
        const m = LITERAL_RE.exec(line);
        if (m && m[2] === '+') {
          const size = Number(m[1]);
          if (size > this.limits.maxLiteral) {
            events.push({ type: 'fatal', text: 'Literal too large' });
            return events;
          }
          this.literalLeft = size;
          this.skipLiteral = true;
          continue;
        }
        this.skipLine = false;
        continue;
      }
      if (end > this.limits.maxLine) {
        this.parts = [];
        this.total = 0;
        events.push(this.refuse('line-too-long', 'Command line too long', line));
        continue;
      }
      this.total += line.length + 2;
      const m = LITERAL_RE.exec(line);
      if (!m) {
        this.parts.push(line);
        events.push({ type: 'command', parts: this.parts });
        this.parts = [];
        this.total = 0;
        continue;
      }
      const size = Number(m[1]);
      const nonSync = m[2] === '+';
      const tooBig = size > this.limits.maxLiteral || this.total + size > this.limits.maxCommand;
      if (tooBig) {
        const first = this.parts.length ? this.parts[0] : line;
        this.parts = [];
        this.total = 0;
        const reason = size > this.limits.maxLiteral ? 'literal-too-large' : 'command-too-large';
        if (nonSync) {
          if (size > this.limits.maxLiteral) {
            events.push({ type: 'fatal', text: 'Literal too large' });
            return events;
          }
          // Within the literal limit but over the command limit: read and drop it.
          this.literalLeft = size;
          this.skipLiteral = true;
          this.skipLine = true;
        }
        events.push(this.refuse(reason, 'Literal too large', first));
        continue;
      }
      this.parts.push(line);
      this.total += size;
      this.literalLeft = size;
      this.literalChunks = [];
      if (size === 0) this.parts.push(Buffer.alloc(0));
      if (!nonSync) events.push({ type: 'continue' });
    }
    return events;
  }

  refuse(reason, text, line = '') {
    return { type: 'error', tag: tagOf(line), reason, text };
  }
}

/** The tag of a (possibly partial) command line, or '*' when it has none usable. */
function tagOf(line) {
  // eslint-disable-next-line no-control-regex -- CTL bytes are what the check is about
  const m = /^([^\s(){%*"\\\]\x00-\x1f\x7f-\xff+]+) /.exec(line || '');
  return m ? m[1] : '*';
}

module.exports = { CommandFramer, DEFAULT_LIMITS, tagOf };
