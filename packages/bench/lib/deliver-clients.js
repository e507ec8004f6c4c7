'use strict';

const fs = require('node:fs');
const net = require('node:net');
const { spawn } = require('node:child_process');

/*
 * The delivery benchmark's clients and its CPU meter (lib/deliver-run.js): one small LMTP
 * client that times each message from MAIL FROM to its final reply, one raw IMAP APPEND
 * client (LITERAL+, the message and its CRLF in one write), Postfix's smtp-source for
 * throughput, and CPU time of process trees read from /proc. Every server is driven by the
 * same client; nothing here knows which server it talks to.
 */

const SMTP_SOURCE = '/usr/sbin/smtp-source';

/** Dot-stuffs a message for DATA and ends it (RFC 5321 4.5.2); CRLF line ends throughout. */
function dataBody(raw) {
  const text = raw.toString('latin1').replace(/\r?\n/g, '\r\n');
  const stuffed = text.replace(/^\./gm, '..');
  return Buffer.from(
    stuffed.endsWith('\r\n') ? `${stuffed}.\r\n` : `${stuffed}\r\n.\r\n`,
    'latin1',
  );
}

/** A line reader over a socket: `next()` resolves with the next CRLF-terminated line. */
function lines(socket) {
  let buf = '';
  const queue = [];
  const waiting = [];
  let failed = null;
  socket.on('data', (d) => {
    buf += d.toString('latin1');
    let i;
    while ((i = buf.indexOf('\r\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 2);
      if (waiting.length) waiting.shift().resolve(line);
      else queue.push(line);
    }
  });
  const fail = (err) => {
    failed = err;
    while (waiting.length) waiting.shift().reject(err);
  };
  socket.on('error', fail);
  socket.on('close', () => fail(new Error('connection closed')));
  return {
    next() {
      if (queue.length) return Promise.resolve(queue.shift());
      if (failed) return Promise.reject(failed);
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    },
  };
}

/** Reads one (possibly multi-line) SMTP/LMTP reply; throws unless its code matches `ok`. */
async function reply(r, ok) {
  let line;
  do line = await r.next();
  while (/^\d{3}-/.test(line));
  if (!ok.test(line)) throw new Error(`LMTP: unexpected reply ${line}`);
  return line;
}

/**
 * Delivers messages over `sessions` LMTP connections (each takes the next message when its
 * last one is answered), timing each from the MAIL FROM write to its 250.
 * @param {{host: string, port: number, rcpt: string, sender?: string, sessions: number}} o
 * @param {Buffer[]} messages
 * @returns {Promise<{ms: number[], seconds: number}>} per-message latency, wall time
 */
async function lmtpDeliver(o, messages) {
  const ms = [];
  let nextIndex = 0;
  const t0 = process.hrtime.bigint();
  const session = async () => {
    const socket = net.connect(o.port, o.host);
    socket.setNoDelay(true);
    const r = lines(socket);
    await reply(r, /^220 /);
    socket.write('LHLO bench.test\r\n');
    await reply(r, /^250 /);
    while (nextIndex < messages.length) {
      const body = dataBody(messages[nextIndex++]);
      const s = process.hrtime.bigint();
      // PIPELINING: the envelope and DATA in one write, the message after the 354.
      socket.write(
        `MAIL FROM:<${o.sender || 'bench@sender.test'}>\r\nRCPT TO:<${o.rcpt}>\r\nDATA\r\n`,
      );
      await reply(r, /^250 /);
      await reply(r, /^250 /);
      await reply(r, /^354 /);
      socket.write(body);
      await reply(r, /^250 /);
      ms.push(Number(process.hrtime.bigint() - s) / 1e6);
    }
    socket.write('QUIT\r\n');
    await reply(r, /^221 /).catch(() => {});
    socket.destroy();
  };
  await Promise.all(Array.from({ length: o.sessions }, session));
  return { ms, seconds: Number(process.hrtime.bigint() - t0) / 1e9 };
}

/**
 * Appends messages over one IMAP connection with the raw client, one APPEND at a time
 * (LITERAL+: the command, the message and the closing CRLF in one write), timing each to its
 * tagged OK.
 * @param {import('./raw-imap').RawImapClient} client logged in
 * @param {string} mailbox
 * @param {Buffer[]} messages
 * @returns {Promise<{ms: number[], seconds: number}>}
 */
async function imapAppend(client, mailbox, messages) {
  const ms = [];
  const t0 = process.hrtime.bigint();
  let n = 0;
  for (const raw of messages) {
    const msg = Buffer.from(raw.toString('latin1').replace(/\r?\n/g, '\r\n'), 'latin1');
    const tag = `AP${++n}`;
    const line = Buffer.concat([
      Buffer.from(`${tag} APPEND "${mailbox}" {${msg.length}+}\r\n`, 'latin1'),
      msg,
      Buffer.from('\r\n'),
    ]);
    const a = await client.expect(tag, line);
    if (a.status !== 'OK') throw new Error(`APPEND: ${a.statusLine}`);
    ms.push(a.ms);
  }
  return { ms, seconds: Number(process.hrtime.bigint() - t0) / 1e9 };
}

/**
 * Postfix's smtp-source in LMTP mode: `count` generated messages of `size` body bytes over
 * `sessions` connections kept open (-d), every one to `rcpt`.
 * @returns {Promise<{seconds: number, command: string}>}
 */
function smtpSource(o) {
  const args = [
    '-L',
    '-d',
    '-s',
    String(o.sessions),
    '-m',
    String(o.count),
    '-l',
    String(o.size),
    '-f',
    'bench@sender.test',
    '-t',
    o.rcpt,
    `127.0.0.1:${o.port}`,
  ];
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(SMTP_SOURCE, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`smtp-source exited ${code}: ${err.trim()}`));
      else {
        resolve({
          seconds: Number(process.hrtime.bigint() - t0) / 1e9,
          command: `smtp-source ${args.join(' ')}`,
        });
      }
    });
  });
}

/** Whether smtp-source is installed (Debian's postfix package). */
function haveSmtpSource() {
  return fs.existsSync(SMTP_SOURCE);
}

/** utime+stime (and, with `children`, cutime+cstime) of a process, in clock ticks. */
function ticks(pid, children) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    // Fields after the comm: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14).
    return Number(f[11]) + Number(f[12]) + (children ? Number(f[13]) + Number(f[14]) : 0);
  } catch {
    return 0;
  }
}

/** Every live descendant of `root`, root included. */
function tree(root) {
  const kids = new Map();
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const s = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      const ppid = Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1]);
      if (!kids.has(ppid)) kids.set(ppid, []);
      kids.get(ppid).push(Number(e));
    } catch {
      // gone meanwhile
    }
  }
  const out = [];
  const walk = (p) => {
    out.push(p);
    for (const c of kids.get(p) || []) walk(c);
  };
  walk(root);
  return out;
}

/**
 * CPU milliseconds used so far by the process trees under `roots`: every live process's own
 * time, plus what each root collected from children that exited (a PostgreSQL backend or a
 * Dovecot lmtp process that ended during the run is counted there).
 * @param {number[]} roots
 * @returns {number}
 */
function cpuMs(roots) {
  const hz = 100; // USER_HZ on Linux
  let t = 0;
  for (const root of roots) {
    for (const pid of tree(root)) t += ticks(pid, pid === root);
  }
  return (t * 1000) / hz;
}

/** p-quantile (0..1) of numbers, nearest rank. */
function quantile(xs, p) {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
}

module.exports = {
  dataBody,
  lmtpDeliver,
  imapAppend,
  smtpSource,
  haveSmtpSource,
  cpuMs,
  quantile,
};
