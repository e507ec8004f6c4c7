#!/usr/bin/env node
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
 *   node scripts/bench-imap-idle-latency.js [--size small] [--samples 30] [--work DIR] [--out FILE]
 */

const fs = require('node:fs');
const os = require('node:os');
const net = require('node:net');
const path = require('node:path');
const {
  buildMailbox,
  SIZES,
  RawImapClient,
  machineFacts,
  dovecotServer,
  mailgateImapServer,
} = require('@mailgate/bench');
const { corpusDir } = require('../test/support/corpus');

const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const SIZE = opt('--size', 'small');
const SAMPLES = Number(opt('--samples', 30));
const WORK = path.resolve(opt('--work', path.join(os.tmpdir(), 'mailgate-bench')));
const OUT = opt('--out', null);
const TIMEOUT_MS = 30000;

const now = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const pct = (xs, p) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
const round2 = (n) => +n.toFixed(2);

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

async function main() {
  const corpus = corpusDir();
  if (!corpus) throw new Error('the shared corpus is needed (../shared/corpus)');
  const box = buildMailbox({ corpus, work: WORK, name: SIZE, count: SIZES[SIZE] });
  const servers = [mailgateImapServer({ work: WORK, size: SIZE }), dovecotServer('maildir')];
  const sides = [];
  try {
    for (const server of servers) {
      process.stderr.write(`starting ${server.name}\n`);
      const ep = await server.start(box);
      const idler = new Idler(ep);
      await idler.open();
      const writer = new RawImapClient({ host: ep.host, port: ep.port });
      await writer.connect();
      await writer.login(ep.user, ep.password);
      sides.push({ server, idler, writer, fromOk: [], fromWrite: [] });
    }
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
  } finally {
    for (const side of sides) {
      side.idler.close();
      await side.writer.logout().catch(() => {});
    }
    for (const server of servers) {
      await (server.close ? server.close() : server.stop()).catch(() => {});
    }
  }
  const stats = (xs) => ({
    median: round2(median(xs)),
    p90: round2(pct(xs, 0.9)),
    min: round2(Math.min(...xs)),
    max: round2(Math.max(...xs)),
  });
  const results = sides.map((s) => ({
    server: s.server.name,
    door: 'imap',
    request: 'idle_latency',
    samples: s.fromOk.length,
    // Negative: the EXISTS arrived before the APPEND's own OK reached the writer.
    msFromAppendOk: stats(s.fromOk),
    msFromAppendWrite: stats(s.fromWrite),
  }));
  const out = { machine: machineFacts({ work: WORK }), when: new Date().toISOString(), results };
  const text = JSON.stringify(out, null, 2) + '\n';
  if (OUT) fs.writeFileSync(OUT, text);
  process.stdout.write(text);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
