'use strict';

/*
 * A minimal raw IMAP client for tests: writes bytes, collects everything the server sends, and
 * waits for a tagged answer or an exact text. Lets tests assert the wire format itself.
 */

const net = require('node:net');

class RawClient {
  /**
   * @param {number} port
   * @param {string} [host]
   * @param {{localAddress?: string, greeting?: RegExp}} [o] localAddress: e.g. 127.0.0.2, to
   *   come from another loopback address; greeting: what to wait for first
   */
  static async connect(port, host = '127.0.0.1', o = {}) {
    const c = new RawClient();
    c.socket = net.connect({ port, host, localAddress: o.localAddress });
    c.buf = Buffer.alloc(0);
    c.closed = false;
    c.waiters = [];
    c.socket.on('data', (d) => {
      c.buf = Buffer.concat([c.buf, d]);
      c.check();
    });
    c.socket.on('close', () => {
      c.closed = true;
      c.check();
    });
    c.socket.on('error', () => {});
    await c.waitFor(o.greeting || /^\* OK .*\r\n/m);
    return c;
  }

  check() {
    for (const w of [...this.waiters]) {
      const text = this.buf.toString('latin1');
      const m = w.re.exec(text);
      if (m || this.closed) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        clearTimeout(w.timer);
        if (m) {
          const end = m.index + m[0].length;
          const out = this.buf.subarray(0, end);
          this.buf = this.buf.subarray(end);
          w.resolve(out.toString('latin1'));
        } else w.reject(new Error(`connection closed; got ${JSON.stringify(text.slice(0, 500))}`));
      }
    }
  }

  /** Resolves with all text up to and including the first match of re. */
  waitFor(re, ms = 10000) {
    return new Promise((resolve, reject) => {
      const w = { re, resolve, reject };
      w.timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        reject(
          new Error(
            `timeout waiting for ${re}; got ${JSON.stringify(this.buf.toString('latin1').slice(0, 500))}`,
          ),
        );
      }, ms);
      this.waiters.push(w);
      this.check();
    });
  }

  write(data) {
    this.socket.write(data);
  }

  /** Sends `tag command` and resolves with the whole answer through the tagged line (ms: timeout). */
  async cmd(tag, text, ms) {
    this.write(`${tag} ${text}\r\n`);
    return this.waitFor(new RegExp(`^${tag} (OK|NO|BAD)[^\\r\\n]*\\r\\n`, 'm'), ms);
  }

  close() {
    this.socket.destroy();
  }
}

module.exports = { RawClient };
