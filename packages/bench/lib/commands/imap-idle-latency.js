'use strict';

/*
 * IDLE latency (issue 28 "Also": new mail reaches an idling client within 100 ms of its
 * commit): mailgate's IMAP server on the pg store (pushed by PostgreSQL LISTEN/NOTIFY) and
 * Dovecot on a Maildir, in one run, with the same client and the same trigger for both. One
 * session IDLEs on INBOX; a second session APPENDs a small message (LITERAL+), and the time
 * is taken from the APPEND's tagged OK (the message is committed before it, for both servers)
 * to the `* n EXISTS` line on the idling session, and also from the APPEND's write. The
 * servers alternate per sample so that a busy moment of the machine hits both.
 *
 *   npm run bench:imap-idle-latency -- [--size small] [--samples 30] [--work DIR] [--out FILE]
 */

const net = require('node:net');
const { withImapPair, rawSession, spread, writeRun, pairMailbox } = require('../imap-pair');
const { option } = require('../command-kit');

const TIMEOUT_MS = 30000;

const now = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * An idling session: a plain socket that notes the arrival time of every line, so the
 * EXISTS line is timed when its bytes arrive (no parsing on the way).
 */
class Idler {
  constructor(ep) {
    this.ep = ep;
    this.buf = '';
    this.waiters = [];
  }

  async open() {
    this.socket = net.connect({ host: this.ep.host, port: this.ep.port });
    this.socket.setNoDelay(true);
    this.socket.setEncoding('latin1');
    this.socket.on('data', (d) => {
      const at = now();
      this.buf += d;
      let nl;
      while ((nl = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, nl + 1);
        this.buf = this.buf.slice(nl + 1);
        for (const w of [...this.waiters]) {
          if (w.re.test(line)) {
            this.waiters.splice(this.waiters.indexOf(w), 1);
            w.resolve({ line, at });
          }
        }
      }
    });
    await this.wait(/^\* OK/);
    const q = (s) => `"${s.replace(/[\\"]/g, (c) => '\\' + c)}"`;
    await this.send(`l LOGIN ${q(this.ep.user)} ${q(this.ep.password)}`, /^l OK/);
    await this.send('s SELECT INBOX', /^s OK/);
  }

  wait(re) {
    return new Promise((resolve, reject) => {
      const w = { re, resolve };
      this.waiters.push(w);
      setTimeout(() => {
        if (this.waiters.includes(w)) reject(new Error(`no ${re} within ${TIMEOUT_MS} ms`));
      }, TIMEOUT_MS).unref();
    });
  }

  send(line, re) {
    const p = this.wait(re);
    this.socket.write(line + '\r\n');
    return p;
  }

  idle() {
    return this.send('i IDLE', /^\+ /);
  }

  done() {
    return this.send('DONE', /^i OK/);
  }

  close() {
    this.socket.destroy();
  }
}

function message(n) {
  return Buffer.from(
    [
      'From: idle-bench@example.org',
      'To: bench@example.org',
      `Subject: idle latency ${n}`,
      `Message-ID: <idle-${n}-${Date.now()}@example.org>`,
      'Date: Fri, 27 Nov 2026 12:00:00 +0000',
      '',
      'New mail for an idling client.',
      '',
    ].join('\r\n'),
    'latin1',
  );
}

/**
 * `bench imap-idle-latency`: see the file comment.
 * @param {string[]} args --size, --samples, --work, --out
 */
async function main(args) {
  const SIZE = option(args, '--size', 'small');
  const SAMPLES = Number(option(args, '--samples', 30));
  const { work: WORK, box } = pairMailbox(args, SIZE);
  const open = async (ep) => {
    const idler = new Idler(ep);
    await idler.open();
    const writer = await rawSession(ep);
    const close = async () => {
      idler.close();
      await writer.logout();
    };
    return { idler, writer, fromOk: [], fromWrite: [], close };
  };
  const sides = await withImapPair({ box, work: WORK, size: SIZE }, open, async (sides) => {
    for (let i = 0; i < SAMPLES; i++) {
      for (const side of i % 2 ? [...sides].reverse() : sides) {
        await side.idler.idle();
        await sleep(50); // the IDLE in place (and any poll timer started) before the write
        const exists = side.idler.wait(/^\* \d+ EXISTS/);
        const raw = message(i);
        const t0 = now();
        await side.writer.command(`APPEND INBOX {${raw.length}+}\r\n${raw.toString('latin1')}`);
        const ok = now();
        const { at } = await exists;
        side.fromOk.push(at - ok);
        side.fromWrite.push(at - t0);
        await side.idler.done();
      }
    }
  });
  const results = sides.map((s) => ({
    server: s.server.name,
    door: 'imap',
    request: 'idle_latency',
    samples: s.fromOk.length,
    // Negative: the EXISTS arrived before the APPEND's own OK reached the writer.
    msFromAppendOk: spread(s.fromOk, 2),
    msFromAppendWrite: spread(s.fromWrite, 2),
  }));
  writeRun({ work: WORK, file: option(args, '--out', null), results });
}

module.exports = {
  description: 'new mail to an idling client: mailgate (LISTEN/NOTIFY) vs Dovecot-maildir',
  usage: '[--size small] [--samples 30] [--work DIR] [--out FILE]',
  run: main,
};
