'use strict';

const net = require('node:net');

/*
 * A raw LMTP client for the tests: writes bytes as given (pipelined or not) and reads whole
 * replies (the last line of a reply has a space after its code).
 */
class RawLmtp {
  /** @param {{port?: number, path?: string, host?: string}} to */
  static async connect(to) {
    const c = new RawLmtp();
    c.socket = to.path ? net.connect(to.path) : net.connect(to.port, to.host || '127.0.0.1');
    c.buf = '';
    c.waiters = [];
    c.closed = false;
    c.socket.setEncoding('latin1');
    c.socket.on('data', (d) => {
      c.buf += d;
      c.wake();
    });
    c.socket.on('close', () => {
      c.closed = true;
      c.wake();
    });
    c.socket.on('error', () => {});
    await new Promise((resolve, reject) => {
      c.socket.once('connect', resolve);
      c.socket.once('error', reject);
    });
    return c;
  }

  wake() {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  write(data) {
    this.socket.write(data);
  }

  /** The next complete reply, as `{code, lines, text}`; null when the server closed first. */
  async reply() {
    for (;;) {
      const m = /^(?:\d{3}-[^\n]*\n)*(\d{3}) [^\n]*\n/.exec(this.buf);
      if (m) {
        const text = m[0];
        this.buf = this.buf.slice(text.length);
        return { code: Number(m[1]), text, lines: text.trimEnd().split('\r\n') };
      }
      if (this.closed) return null;
      await new Promise((r) => this.waiters.push(r));
    }
  }

  /** Writes a line and returns the reply to it. */
  async cmd(line) {
    this.write(line + '\r\n');
    return this.reply();
  }

  async replies(n) {
    const out = [];
    for (let i = 0; i < n; i++) out.push(await this.reply());
    return out;
  }

  end() {
    this.socket.destroy();
  }
}

module.exports = { RawLmtp };
