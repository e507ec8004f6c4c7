'use strict';

const net = require('node:net');
const tls = require('node:tls');

/*
 * The raw IMAP timing client of the `imap` door: the same client for every IMAP server
 * (Dovecot on mbox, Dovecot on Maildir, mailgate-imap), so that a ratio between servers is a
 * ratio between servers and not between clients.
 *
 * While the clock runs it only writes the command and frames the answer: it finds line ends,
 * skips `{n}` literals by their announced length (RFC 3501 4.3) and recognises the tagged
 * completion. It counts bytes and untagged responses and keeps the received chunks; it never
 * builds an object per message. Parsing (uids for the agreement check) happens after the clock
 * stops, on the kept bytes. An IMAP client library such as imapflow parses every response into
 * objects as it arrives; on a 21,282-message header fetch that costs ~10× the server's own
 * time, which is why it is used for set-up only.
 *
 * This module must never parse responses inside `command()`'s timed section.
 */

const CR = 13;
const LF = 10;

/** Response framer: a small state machine over chunks, no per-response allocation. */
class Framer {
  /** @param {string} tag */
  constructor(tag) {
    this.tag = Buffer.from(tag + ' ');
    this.star = Buffer.from('* ');
    this.literal = 0; // bytes of a literal still to skip
    this.lineStart = true; // next byte starts a response line (not a literal's continuation)
    this.tail = Buffer.alloc(0); // an incomplete line (at most one line of carry-over)
    this.untagged = 0;
    this.done = false;
    this.status = null; // 'OK' | 'NO' | 'BAD'
    this.statusLine = '';
    // The greeting (RFC 3501 7.1) is the one answer without a tag: its first line completes it.
    this.greeting = tag === '*';
  }

  /**
   * Consumes one chunk; returns true when the tagged completion has been read.
   * @param {Buffer} chunk
   */
  push(chunk) {
    let buf = this.tail.length ? Buffer.concat([this.tail, chunk]) : chunk;
    this.tail = Buffer.alloc(0);
    let i = 0;
    while (i < buf.length) {
      if (this.literal > 0) {
        const take = Math.min(this.literal, buf.length - i);
        this.literal -= take;
        i += take;
        continue;
      }
      const nl = buf.indexOf(LF, i);
      if (nl < 0) {
        this.tail = Buffer.from(buf.subarray(i));
        return false;
      }
      if (this.lineStart && this.greeting) {
        this.done = true;
        this.statusLine = buf.toString('latin1', i, nl).replace(/\r$/, '');
        this.status = this.statusLine.split(' ', 2)[1] || '';
        return true;
      }
      if (this.lineStart) {
        if (startsWith(buf, i, this.star)) this.untagged++;
        else if (startsWith(buf, i, this.tag)) {
          this.done = true;
          const line = buf.toString('latin1', i + this.tag.length, nl).replace(/\r$/, '');
          this.status = line.split(' ', 1)[0].toUpperCase();
          this.statusLine = line;
          return true;
        }
      }
      const lit = literalAt(buf, nl);
      if (lit >= 0) {
        this.literal = lit;
        this.lineStart = false;
      } else {
        this.lineStart = true;
      }
      i = nl + 1;
    }
    return false;
  }
}

function startsWith(buf, at, prefix) {
  if (buf.length - at < prefix.length) return false;
  for (let k = 0; k < prefix.length; k++) if (buf[at + k] !== prefix[k]) return false;
  return true;
}

/** `{123}` or `{123+}` right before the line end at `nl`: its length, else -1. */
function literalAt(buf, nl) {
  let j = nl - 1;
  if (j >= 0 && buf[j] === CR) j--;
  if (j < 0 || buf[j] !== 0x7d /* } */) return -1;
  j--;
  if (j >= 0 && buf[j] === 0x2b /* + */) j--;
  let n = 0;
  let mul = 1;
  let digits = 0;
  while (j >= 0 && buf[j] >= 0x30 && buf[j] <= 0x39) {
    n += (buf[j] - 0x30) * mul;
    mul *= 10;
    digits++;
    j--;
  }
  if (!digits || j < 0 || buf[j] !== 0x7b /* { */) return -1;
  return n;
}

/**
 * A raw IMAP connection: one command at a time.
 */
class RawImapClient {
  /**
   * @param {{host?: string, port: number, tls?: boolean, timeoutMs?: number}} opts
   */
  constructor(opts) {
    this.opts = { host: '127.0.0.1', timeoutMs: 600000, ...opts };
    this.socket = null;
    this.seq = 0;
    this.pending = null; // {framer, chunks, bytes, resolve, reject}
    this.greeting = null;
  }

  /** Connects and reads the server greeting. */
  async connect() {
    const { host, port } = this.opts;
    this.socket = this.opts.tls
      ? tls.connect({ host, port, rejectUnauthorized: false })
      : net.connect({ host, port });
    this.socket.setNoDelay(true);
    this.socket.on('data', (chunk) => this.onData(chunk));
    this.socket.on('error', (err) => this.fail(err));
    this.socket.on('close', () => this.fail(new Error('IMAP connection closed')));
    const greeting = await this.expect('*', null);
    this.greeting = greeting.text();
    return this.greeting;
  }

  onData(chunk) {
    const p = this.pending;
    if (!p) return;
    p.chunks.push(chunk);
    p.bytes += chunk.length;
    if (p.framer.push(chunk)) {
      const end = process.hrtime.bigint();
      this.pending = null;
      p.resolve(end);
    }
  }

  fail(err) {
    const p = this.pending;
    this.pending = null;
    if (p) p.reject(err);
  }

  /** Reads until a response starting with `tag ` (the greeting uses `*`), optionally writing first. */
  expect(tag, line) {
    return new Promise((resolve, reject) => {
      const framer = new Framer(tag);
      const p = { framer, chunks: [], bytes: 0, start: 0n, reject };
      p.resolve = (end) => {
        const ms = Number(end - p.start) / 1e6;
        resolve(new Answer(p.chunks, p.bytes, framer, ms));
      };
      this.pending = p;
      p.start = process.hrtime.bigint();
      if (line !== null) this.socket.write(line);
      const timer = setTimeout(() => {
        if (this.pending === p) this.fail(new Error(`IMAP answer timed out: ${tag}`));
      }, this.opts.timeoutMs);
      timer.unref();
    });
  }

  /**
   * Sends one command and reads to its tagged completion. The timed span runs from just before
   * the write to the chunk that completes the tagged line; nothing is parsed inside it.
   * @param {string} text the command without tag and CRLF (literals must be LITERAL+ `{n+}`)
   * @returns {Promise<Answer>}
   */
  async command(text) {
    const tag = 'R' + ++this.seq;
    const a = await this.expect(tag, `${tag} ${text}\r\n`);
    if (a.status !== 'OK') {
      const err = new Error(`IMAP ${text.slice(0, 40)}: ${a.statusLine}`);
      err.code = 'IMAP_COMMAND_FAILED';
      err.answer = a;
      throw err;
    }
    return a;
  }

  /** LOGIN with quoted strings (test and bench accounts only: no TLS requirement here). */
  login(user, pass) {
    return this.command(`LOGIN ${quote(user)} ${quote(pass)}`);
  }

  async logout() {
    if (!this.socket) return;
    try {
      await this.command('LOGOUT');
    } catch {
      // a server that closes first is fine
    }
    this.socket.destroy();
    this.socket = null;
  }
}

/** One command's answer: timing, counts and the raw bytes, parsed only on request. */
class Answer {
  constructor(chunks, bytes, framer, ms) {
    this.chunks = chunks;
    this.bytes = bytes;
    this.untagged = framer.untagged;
    this.status = framer.status;
    this.statusLine = framer.statusLine;
    this.ms = ms;
  }

  /** The whole answer as text (latin1: bytes kept one to one). */
  text() {
    return Buffer.concat(this.chunks).toString('latin1');
  }

  /** UIDs of `* SEARCH` lines and of `UID n` items in FETCH responses (after the clock). */
  uids() {
    const t = this.text();
    const out = [];
    for (const m of t.matchAll(/^\* SEARCH((?: \d+)*)/gm)) {
      for (const n of m[1].trim().split(' ')) if (n) out.push(Number(n));
    }
    for (const m of t.matchAll(/^\* \d+ FETCH \((?:[^\r\n]*?)\bUID (\d+)/gm))
      out.push(Number(m[1]));
    return out;
  }

  /** Untagged `* n EXISTS` (SELECT's message count). */
  exists() {
    const m = /^\* (\d+) EXISTS/m.exec(this.text());
    return m ? Number(m[1]) : null;
  }
}

function quote(s) {
  return '"' + String(s).replace(/[\\"]/g, (c) => '\\' + c) + '"';
}

module.exports = { RawImapClient, Framer, Answer, literalAt };
