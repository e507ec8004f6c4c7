'use strict';

const { Transform } = require('stream');
const { ByteWindow } = require('./byte-window');
const { isFromLine, MAX_FROM_LINE } = require('./from-line');
const { escapeMessage, unescapeMessage, VARIANTS } = require('./escape');

const NEED = Symbol('need more data');
const DEFAULT_MAX = 200 * 1024 * 1024;
const CONTENT_LENGTH_RE = /^content-length[ \t]*:[ \t]*(\d{1,15})[ \t]*\r?\n?$/i;
const RD_QUOTED_RE = /^>>+From /;
const EMPTY = Buffer.alloc(0);

function lineIsEmpty(win, ls, len) {
  if (len === 1) return win.byteAt(ls) === 0x0a;
  return len === 2 && win.byteAt(ls) === 0x0d && win.byteAt(ls + 1) === 0x0a;
}

function hasQuotedFrom(buf) {
  let pos = 0;
  while (pos < buf.length) {
    if (buf[pos] === 0x3e && buf.toString('latin1', pos, pos + 6) === '>From ') return true;
    const nl = buf.indexOf(0x0a, pos);
    if (nl < 0) return false;
    pos = nl + 1;
  }
  return false;
}

/**
 * Streaming mbox reader: Buffer chunks in, one object per file entry out (see README.md for the
 * variant and separator rules). Only the entry being scanned is buffered, so memory is bounded by
 * the largest message (or maxMessageBytes, past which an entry's content is dropped).
 */
class MboxSplitter extends Transform {
  /**
   * @param {object} [options]
   * @param {'auto'|'mboxo'|'mboxrd'|'mboxcl'|'mboxcl2'} [options.variant='auto']
   * @param {number} [options.maxMessageBytes=209715200] entries larger than this are emitted with
   *   an `error`, empty `raw`, and correct offset/length
   * @param {boolean} [options.anyLine=false] a valid From_ line separates entries at any line
   *   start, empty line before it or not (README "Separator rules"): for reading mail that
   *   another writer appended after a cut-short line, e.g. the tail of a crashed rewrite
   */
  constructor(options = {}) {
    super({ readableObjectMode: true, writableObjectMode: false });
    const { variant = 'auto', maxMessageBytes = DEFAULT_MAX, anyLine = false } = options;
    this._anyLine = Boolean(anyLine);
    if (variant !== 'auto' && !VARIANTS.includes(variant)) {
      throw new TypeError(`unknown mbox variant: ${variant}`);
    }
    this._variant = variant;
    this._max = maxMessageBytes;
    // mboxo/mboxrd files have no length headers; a stray Content-Length there must not be trusted.
    this._honorContentLength = variant === 'auto' || variant === 'mboxcl' || variant === 'mboxcl2';
    this._win = new ByteWindow();
    this._entry = null;
    this._index = 0;
    this._sawRd = false;
  }

  _transform(chunk, encoding, callback) {
    this._win.append(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk, encoding));
    try {
      this._drain(false);
    } catch (err) {
      callback(err);
      return;
    }
    callback();
  }

  _flush(callback) {
    try {
      this._drain(true);
    } catch (err) {
      callback(err);
      return;
    }
    callback();
  }

  _drain(eof) {
    const win = this._win;
    for (;;) {
      let e = this._entry;
      if (!e) {
        if (win.length === 0) return;
        const start = win.base;
        const le = this._lineEnd(start, eof);
        let garbage;
        if (le === NEED) {
          if (win.length <= MAX_FROM_LINE) return;
          garbage = true;
        } else garbage = !isFromLine(win.view(start, le));
        e = this._entry = {
          start,
          bodyStart: garbage ? start : le,
          scan: garbage ? start : le,
          searchFrom: 0,
          garbage,
          prevEmpty: false,
          prevEmptyLen: 0,
          headerEnd: -1,
          contentLength: null,
          clPending: false,
          clUsed: false,
          skipping: false,
          midLine: false,
          fromLine: null,
        };
      }
      const r = this._advance(e, eof);
      if (r === NEED) return;
      this._finish(e, r.end, r.trailerLen);
      this._entry = null;
    }
  }

  /** Absolute end of the line starting at `from` (after its LF), EOF end, or NEED. */
  _lineEnd(from, eof) {
    const nl = this._win.indexOf(0x0a, from);
    if (nl >= 0) return nl + 1;
    return eof ? this._win.endAbs : NEED;
  }

  /** Is there a complete valid From_ line at `at`? true/false/NEED */
  _fromLineAt(at, eof) {
    const win = this._win;
    if (win.byteAt(at) !== 0x46) return false;
    const le = this._lineEnd(at, eof);
    if (le === NEED) return win.endAbs - at > MAX_FROM_LINE ? false : NEED;
    return isFromLine(win.view(at, le));
  }

  /**
   * mboxcl/mboxcl2: trust Content-Length only if the byte after the body is EOF, or an optional
   * line ending followed by EOF or a valid From_ line. Anything else means the header is stale
   * (edited message, wrong writer) and we fall back to From_ scanning.
   */
  _checkContentLength(e, eof) {
    const win = this._win;
    const end = win.endAbs;
    const p = e.headerEnd + e.contentLength;
    if (p > end) return eof ? false : NEED;
    if (p === end) return eof ? { end: p, trailerLen: 0 } : NEED;
    let nl = 0;
    const c = win.byteAt(p);
    if (c === 0x0a) nl = 1;
    else if (c === 0x0d) {
      if (p + 1 >= end) return eof ? false : NEED;
      if (win.byteAt(p + 1) === 0x0a) nl = 2;
    }
    if (nl) {
      const q = p + nl;
      if (q === end) return eof ? { end: q, trailerLen: nl } : NEED;
      const ok = this._fromLineAt(q, eof);
      if (ok === NEED) return NEED;
      return ok ? { end: q, trailerLen: nl } : false;
    }
    if (win.byteAt(p - 1) !== 0x0a) return false;
    const ok = this._fromLineAt(p, eof);
    if (ok === NEED) return NEED;
    return ok ? { end: p, trailerLen: 0 } : false;
  }

  _startSkipping(e) {
    e.skipping = true;
    e.clPending = false;
    e.fromLine = this._win.copy(e.start, e.bodyStart);
  }

  /** Scan lines of the current entry until its end is known: {end, trailerLen} or NEED. */
  _advance(e, eof) {
    const win = this._win;
    for (;;) {
      if (e.clPending) {
        const r = this._checkContentLength(e, eof);
        if (r === NEED) return NEED;
        e.clPending = false;
        if (r) {
          e.clUsed = true;
          return r;
        }
      }
      const ls = e.scan;
      const end = win.endAbs;
      if (ls >= end) {
        if (!eof) {
          if (e.skipping) win.consume(ls);
          return NEED;
        }
        const trailerLen = !e.garbage && !e.skipping && e.prevEmpty ? e.prevEmptyLen : 0;
        return { end, trailerLen };
      }
      const nl = win.indexOf(0x0a, Math.max(ls, e.searchFrom));
      let le;
      if (nl < 0) {
        if (!eof) {
          e.searchFrom = end;
          if (!e.skipping && end - e.start > this._max) this._startSkipping(e);
          if (e.skipping) {
            // A huge line can never be a From_ line; forget its bytes but remember we are inside it.
            if (end - ls > MAX_FROM_LINE) {
              e.midLine = true;
              e.scan = end;
              win.consume(end);
            } else win.consume(ls);
          }
          return NEED;
        }
        le = end;
      } else le = nl + 1;
      e.searchFrom = 0;
      const len = le - ls;
      const midLine = e.midLine;
      e.midLine = false;
      const c0 = midLine ? -1 : win.byteAt(ls);
      if (
        c0 === 0x46 &&
        (e.prevEmpty || e.garbage || this._anyLine) &&
        len <= MAX_FROM_LINE &&
        isFromLine(win.view(ls, le))
      ) {
        return {
          end: ls,
          trailerLen: e.garbage || e.skipping || !e.prevEmpty ? 0 : e.prevEmptyLen,
        };
      }
      const empty = !midLine && lineIsEmpty(win, ls, len);
      if (c0 === 0x3e && !e.garbage && !this._sawRd && len <= MAX_FROM_LINE) {
        if (RD_QUOTED_RE.test(win.view(ls, le).toString('latin1'))) this._sawRd = true;
      }
      if (!e.garbage && e.headerEnd < 0) {
        if (empty) e.headerEnd = le;
        else if ((c0 === 0x43 || c0 === 0x63) && e.contentLength === null && len < 100) {
          const m = CONTENT_LENGTH_RE.exec(win.view(ls, le).toString('latin1'));
          if (m) e.contentLength = Number(m[1]);
        }
        if (
          e.headerEnd === le &&
          e.contentLength !== null &&
          this._honorContentLength &&
          !e.skipping &&
          le + e.contentLength - e.start <= this._max
        ) {
          e.clPending = true;
        }
      }
      e.prevEmpty = empty;
      e.prevEmptyLen = len;
      e.scan = le;
      if (!e.skipping && le - e.start > this._max) this._startSkipping(e);
    }
  }

  _finish(e, end, trailerLen) {
    const win = this._win;
    const auto = this._variant === 'auto';
    let variant = auto ? (this._sawRd ? 'mboxrd' : 'mboxo') : this._variant;
    let fromLine;
    let raw;
    let trailer = EMPTY;
    let original = null;
    let error = null;
    if (e.skipping) {
      fromLine = e.fromLine;
      raw = EMPTY;
      error = e.garbage
        ? `data before first From_ line (over maxMessageBytes ${this._max}; content dropped)`
        : `message exceeds maxMessageBytes (${this._max}); content dropped`;
    } else if (e.garbage) {
      fromLine = EMPTY;
      raw = win.copy(e.start, end);
      original = raw;
      error = 'data before first From_ line';
    } else {
      fromLine = win.copy(e.start, e.bodyStart);
      const stored = win.view(e.bodyStart, end - trailerLen);
      trailer = win.copy(end - trailerLen, end);
      if (e.clUsed) {
        if (auto) variant = hasQuotedFrom(stored) ? 'mboxcl' : 'mboxcl2';
      }
      raw = unescapeMessage(stored, variant);
      if (!escapeMessage(raw, variant).equals(stored)) original = win.copy(e.bodyStart, end);
    }
    this.push({
      index: this._index++,
      offset: e.start,
      length: end - e.start,
      fromLine,
      raw,
      variant,
      trailer,
      original,
      error,
    });
    win.consume(end);
  }
}

module.exports = { MboxSplitter };
