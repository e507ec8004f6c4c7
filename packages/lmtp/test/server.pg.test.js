'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const tls = require('node:tls');
const { startLmtp, stored } = require('./helpers');
const { RawLmtp } = require('./client');
const { createLmtpServer } = require('../lib');
const { skipOutsideCI } = require('@mailgate/test-support/skip');
const { selfSignedCert } = require('@mailgate/test-support/tls');

function hasOpenssl() {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/*
 * The LMTP server against a real test database: the RFC 2033 conversation (LHLO, pipelined
 * MAIL/RCPT/DATA, one reply per recipient), the address rule, byte-exact storage with the
 * delivery headers, the codes for unknown, proxied and over-size, a transient fault as 451
 * with nothing stored twice, BDAT, a unix socket, STARTTLS and the input bounds.
 */

const MSG =
  'From: Ann <ann@example.org>\r\nSubject: hello lmtp\r\nMessage-ID: <m1@example.org>\r\n\r\nA zebracorn body\r\n..dot line\r\n';
const STORED_BODY = MSG.replace('\r\n..dot', '\r\n.dot');

let t;
beforeAll(async () => {
  t = await startLmtp({
    users: ['alice', 'bob', 'pat', 'carl'],
    limits: { maxMessage: 4096, maxRecipients: 3, maxConnectionsPerAddress: 4 },
  });
  const bob = await t.service.openBackend('pg', 'bob');
  await bob.createMailbox('INBOX');
  await bob.createMailbox('work');
  await t.service.users.setRoute('pat', 'proxy');
});
afterAll(() => t && t.close());

/** Waits until the server holds no session (earlier tests' closes are seen). */
async function settled() {
  while (t.server.sessions.size) await new Promise((r) => setTimeout(r, 10));
}

async function session() {
  const c = await RawLmtp.connect({ port: t.port });
  expect((await c.reply()).code).toBe(220);
  return c;
}

test('LHLO lists the extensions; HELO/EHLO and commands before LHLO are refused', async () => {
  const c = await session();
  expect((await c.cmd('EHLO x')).text).toMatch(/^500 5\.5\.1 /);
  expect((await c.cmd('MAIL FROM:<>')).text).toMatch(/^503 5\.5\.1 /);
  const r = await c.cmd('LHLO mta.test');
  expect(r.code).toBe(250);
  expect(r.lines.map((l) => l.slice(4))).toEqual([
    'mg.test',
    'PIPELINING',
    'ENHANCEDSTATUSCODES',
    '8BITMIME',
    'SIZE 4096',
    'CHUNKING',
  ]);
  expect((await c.cmd('RCPT TO:<alice@x>')).text).toMatch(/^503 /);
  expect((await c.cmd('FOO')).text).toMatch(/^500 5\.5\.2 /);
  expect((await c.cmd('VRFY alice')).code).toBe(252);
  expect((await c.cmd('NOOP')).code).toBe(250);
  expect((await c.cmd('QUIT')).text).toMatch(/^221 2\.0\.0 /);
  expect(await c.reply()).toBeNull();
});

test('pipelined transaction: one reply per accepted recipient after DATA, stored byte-exact with the delivery headers', async () => {
  const c = await session();
  c.write(
    'LHLO mta.test\r\nMAIL FROM:<ann@example.org> SIZE=200 BODY=8BITMIME\r\n' +
      'RCPT TO:<alice@example.com>\r\nRCPT TO:<nobody@example.com>\r\n' +
      'RCPT TO:<bob+work@example.com>\r\nRCPT TO:<Carl+nosuch@example.com>\r\nDATA\r\n',
  );
  const r = await c.replies(7);
  expect(r.map((x) => x.code)).toEqual([250, 250, 250, 550, 250, 250, 354]);
  expect(r[3].text).toMatch(/^550 5\.1\.1 <nobody@example.com>/);
  c.write(MSG + '.\r\n');
  const after = await c.replies(3);
  expect(after.map((x) => x.text.slice(0, 9))).toEqual(['250 2.0.0', '250 2.0.0', '250 2.0.0']);
  expect(after.map((x) => x.text)).toEqual([
    expect.stringContaining('<alice@example.com>'),
    expect.stringContaining('<bob+work@example.com>'),
    expect.stringContaining('<Carl+nosuch@example.com>'),
  ]);
  const head = (rcpt) => `Return-Path: <ann@example.org>\r\nDelivered-To: ${rcpt}\r\n`;
  // alice had no INBOX yet: made on demand.
  expect(await stored(t.service, 'alice', 'INBOX')).toEqual([
    head('alice@example.com') + STORED_BODY,
  ]);
  // bob+work: the folder `work` exists.
  expect(await stored(t.service, 'bob', 'work')).toEqual([
    head('bob+work@example.com') + STORED_BODY,
  ]);
  expect(await stored(t.service, 'bob', 'INBOX')).toEqual([]);
  // The local part in another case finds carl (lower-cased); `nosuch` is no folder: INBOX.
  expect(await stored(t.service, 'carl', 'INBOX')).toEqual([
    head('Carl+nosuch@example.com') + STORED_BODY,
  ]);
  // The same derived rows as any write: word index and header columns answer searches.
  const be = await t.service.openBackend('pg', 'alice');
  expect((await be.search('zebracorn')).total).toBe(1);
  expect((await be.search('from:ann@example.org subject:"hello lmtp"')).total).toBe(1);
  // The session goes on: RSET and a second transaction.
  expect((await c.cmd('RSET')).code).toBe(250);
  c.end();
});

test('the replies of a pipelined MAIL/RCPT/DATA leave in one write; each 250 after DATA at its commit', async () => {
  await settled();
  const c = await session();
  try {
    expect((await c.cmd('LHLO mta.test')).code).toBe(250);
    const [s] = [...t.server.sessions];
    // The server side's socket writes from here on (what the client receives, in calls).
    const writes = [];
    const write = s.socket.write;
    s.socket.write = function counted(...args) {
      writes.push(String(args[0]));
      return write.apply(this, args);
    };
    c.write(
      'MAIL FROM:<ann@example.org>\r\nRCPT TO:<alice@example.com>\r\n' +
        'RCPT TO:<bob@example.com>\r\nDATA\r\n',
    );
    expect((await c.replies(4)).map((x) => x.code)).toEqual([250, 250, 250, 354]);
    // One write when the four lines came in one segment (two at most if TCP split them);
    // four before (one per reply).
    expect(writes.length).toBeLessThan(3);
    writes.length = 0;
    c.write(MSG + '.\r\n');
    expect((await c.replies(2)).map((x) => x.code)).toEqual([250, 250]);
    // One write per recipient: alice's 250 was not held back for bob's commit.
    expect(writes).toEqual([
      expect.stringMatching(/^250 2\.0\.0 <alice@example\.com>/),
      expect.stringMatching(/^250 2\.0\.0 <bob@example\.com>/),
    ]);
  } finally {
    c.end();
  }
});

test('proxied users get 451 4.2.1 until the cutover, then their mail is taken', async () => {
  const c = await session();
  await c.cmd('LHLO mta.test');
  await c.cmd('MAIL FROM:<ann@example.org>');
  expect((await c.cmd('RCPT TO:<pat@example.com>')).text).toMatch(/^451 4\.2\.1 <pat@example.com>/);
  expect((await c.cmd('DATA')).text).toMatch(/^503 5\.5\.1 /);
  // A route switched to proxy between RCPT and DATA: the write path refuses, still 451.
  await t.service.users.setRoute('pat', 'store');
  expect((await c.cmd('RCPT TO:<pat@example.com>')).code).toBe(250);
  await t.service.users.setRoute('pat', 'proxy');
  expect((await c.cmd('DATA')).code).toBe(354);
  c.write(MSG + '.\r\n');
  expect((await c.reply()).text).toMatch(/^451 4\.2\.1 /);
  expect(await stored(t.service, 'pat', 'INBOX')).toEqual([]);
  await t.service.users.setRoute('pat', 'store');
  await c.cmd('MAIL FROM:<ann@example.org>');
  expect((await c.cmd('RCPT TO:<pat@example.com>')).code).toBe(250);
  await c.cmd('DATA');
  c.write(MSG + '.\r\n');
  expect((await c.reply()).code).toBe(250);
  expect(await stored(t.service, 'pat', 'INBOX')).toHaveLength(1);
  await t.service.users.setRoute('pat', 'proxy');
  c.end();
});

test('a transient fault answers 451 4.3.0 for that recipient and nothing is kept for it', async () => {
  const c = await session();
  await c.cmd('LHLO mta.test');
  await c.cmd('MAIL FROM:<>');
  await c.cmd('RCPT TO:<bob@example.com>');
  await c.cmd('RCPT TO:<alice@example.com>');
  await c.cmd('DATA');
  const before = (await stored(t.service, 'alice', 'INBOX')).length;
  // The database connection fails for the second recipient's write (as when PostgreSQL
  // restarts): the error is not a coded one, so it counts as transient.
  const store = t.service.store;
  const real = store.appendMessage;
  let calls = 0;
  store.appendMessage = async function (...args) {
    if (++calls === 2)
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
        code: 'ECONNREFUSED',
      });
    return real.apply(this, args);
  };
  try {
    c.write('Subject: fault\r\n\r\nx\r\n.\r\n');
    const r = await c.replies(2);
    expect(r[0].text).toMatch(/^250 2\.0\.0 <bob@example.com>/);
    expect(r[1].text).toMatch(/^451 4\.3\.0 <alice@example.com> Temporary failure/);
    expect(r[1].text).not.toMatch(/ECONNREFUSED|5432/);
  } finally {
    store.appendMessage = real;
  }
  expect((await stored(t.service, 'alice', 'INBOX')).length).toBe(before);
  c.end();
});

test('size: SIZE over the limit at MAIL, and a message over it at DATA, get 552 5.3.4', async () => {
  const c = await session();
  await c.cmd('LHLO mta.test');
  expect((await c.cmd('MAIL FROM:<> SIZE=5000')).text).toMatch(/^552 5\.3\.4 /);
  await c.cmd('MAIL FROM:<>');
  await c.cmd('RCPT TO:<bob@example.com>');
  await c.cmd('RCPT TO:<alice@example.com>');
  await c.cmd('DATA');
  const before = (await stored(t.service, 'bob', 'INBOX')).length;
  c.write('Subject: big\r\n\r\n' + 'x'.repeat(100).concat('\r\n').repeat(50) + '.\r\n');
  const r = await c.replies(2);
  expect(r.map((x) => x.text.slice(0, 9))).toEqual(['552 5.3.4', '552 5.3.4']);
  expect((await stored(t.service, 'bob', 'INBOX')).length).toBe(before);
  expect((await c.cmd('NOOP')).code).toBe(250);
  c.end();
});

test('recipients per transaction are bounded (452 4.5.3), the transaction goes on', async () => {
  const c = await session();
  await c.cmd('LHLO mta.test');
  await c.cmd('MAIL FROM:<>');
  for (let i = 0; i < 3; i++) expect((await c.cmd('RCPT TO:<bob@example.com>')).code).toBe(250);
  expect((await c.cmd('RCPT TO:<bob@example.com>')).text).toMatch(/^452 4\.5\.3 /);
  expect((await c.cmd('DATA')).code).toBe(354);
  c.write('Subject: three\r\n\r\nx\r\n.\r\n');
  expect((await c.replies(3)).map((x) => x.code)).toEqual([250, 250, 250]);
  c.end();
});

test('BDAT chunks, pipelined, deliver byte-exact with one reply per recipient', async () => {
  const c = await session();
  const a = 'Subject: chunked\r\n\r\n.first\r\n';
  const b = '.\r\nend\r\n';
  c.write(
    'LHLO mta.test\r\nMAIL FROM:<ann@example.org>\r\nRCPT TO:<bob+work@example.com>\r\n' +
      'RCPT TO:<nobody@example.com>\r\nRCPT TO:<alice@example.com>\r\n' +
      `BDAT ${a.length}\r\n${a}BDAT ${b.length} LAST\r\n${b}NOOP\r\n`,
  );
  const r = await c.replies(9);
  expect(r.map((x) => x.code)).toEqual([250, 250, 250, 550, 250, 250, 250, 250, 250]);
  const work = await stored(t.service, 'bob', 'work');
  expect(work[work.length - 1]).toBe(
    'Return-Path: <ann@example.org>\r\nDelivered-To: bob+work@example.com\r\n' + a + b,
  );
  // BDAT without a transaction: the chunk is read and refused, the stream stays in step.
  c.write('BDAT 6 LAST\r\nQUIT\r\nNOOP\r\n');
  expect((await c.reply()).text).toMatch(/^503 /);
  expect((await c.reply()).code).toBe(250);
  c.end();
});

test('a client pipelining without reading its replies is held to a bounded buffer; others are served', async () => {
  const { MAX_PENDING } = require('../lib/session');
  await settled();
  const flood = await session();
  flood.socket.pause(); // reads nothing
  // 12 MB of commands, 28 MB of replies: more than the kernel's socket buffers take.
  const N = 2000000;
  const noops = Buffer.from('NOOP\r\n'.repeat(N));
  flood.write(noops);
  const [s] = [...t.server.sessions];
  // Give the server time to take what it will take.
  let last = -1;
  for (let i = 0; i < 50 && s.socket.bytesRead !== last; i++) {
    last = s.socket.bytesRead;
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(s.socket.writableLength).toBeLessThanOrEqual(MAX_PENDING + 64 * 1024);
  expect(s.framer.buffered).toBeLessThanOrEqual(MAX_PENDING + 64 * 1024);
  // An innocent client beside it is answered.
  const other = await session();
  expect((await other.cmd('LHLO mta.test')).code).toBe(250);
  other.end();
  // Once the flood's client reads, every command is answered.
  const answered = new Promise((resolve) => {
    let text = flood.buf;
    flood.socket.removeAllListeners('data');
    flood.socket.on('data', (d) => {
      text += d;
      if (text.length >= N * 14) resolve(text);
    });
  });
  flood.socket.resume();
  const text = await answered;
  expect(text.length).toBe(N * 14);
  expect(text.split('250 2.0.0 Ok\r\n').join('')).toBe('');
  flood.end();
});

test('an over-long command line is refused without ending the session', async () => {
  const c = await session();
  expect((await c.cmd('LHLO ' + 'x'.repeat(10000))).text).toMatch(/^500 5\.5\.2 Line too long/);
  expect((await c.cmd('LHLO mta.test')).code).toBe(250);
  c.end();
});

test('connections per client address are capped (421), others are served', async () => {
  await settled();
  const open = [];
  for (let i = 0; i < 4; i++) open.push(await session());
  const extra = await RawLmtp.connect({ port: t.port });
  expect((await extra.reply()).text).toMatch(/^421 4\.7\.0 /);
  expect(await extra.reply()).toBeNull();
  // An innocent session already in gets its answers.
  expect((await open[0].cmd('LHLO mta.test')).code).toBe(250);
  open.forEach((c) => c.end());
  await new Promise((r) => setTimeout(r, 100));
  const again = await session();
  again.end();
});

test('an idle session is closed with 421 4.4.2', async () => {
  const s = createLmtpServer({
    service: t.service,
    limits: { idleTimeout: 150 },
    hostname: 'mg.test',
  });
  const { port } = await s.listen({ port: 0 });
  try {
    const c = await RawLmtp.connect({ port });
    await c.reply();
    expect((await c.reply()).text).toMatch(/^421 4\.4\.2 /);
    expect(await c.reply()).toBeNull();
  } finally {
    await s.close();
  }
});

test('a unix socket, and a stale socket file left behind is replaced', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-lmtp-sock-'));
  const sock = path.join(dir, 'lmtp');
  const s1 = createLmtpServer({ service: t.service });
  const s2 = createLmtpServer({ service: t.service });
  try {
    await s1.listen({ path: sock });
    // A live socket is not taken over.
    await expect(s2.listen({ path: sock })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    const c = await RawLmtp.connect({ path: sock });
    expect((await c.reply()).code).toBe(220);
    expect((await c.cmd('LHLO x')).code).toBe(250);
    c.end();
    await s1.close();
    // A socket file nobody listens on (a process that died): taken over.
    execFileSync('python3', [
      '-c',
      'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])',
      sock,
    ]);
    expect(fs.lstatSync(sock).isSocket()).toBe(true);
    await s2.listen({ path: sock });
    const d = await RawLmtp.connect({ path: sock });
    expect((await d.reply()).code).toBe(220);
    d.end();
  } finally {
    await s1.close();
    await s2.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

describe('STARTTLS', () => {
  let dir;
  let creds = null;
  beforeAll(() => {
    ({ dir, creds } = selfSignedCert('lmtp'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  // openssl is needed to make the certificate (the plain tests above run without it).
  const why = skipOutsideCI(
    __filename,
    hasOpenssl() ? null : 'openssl is not installed',
    'STARTTLS',
  );
  (why ? test.skip : test)(
    'offered with a certificate; after the handshake LHLO again, then delivery works',
    async () => {
      const s = createLmtpServer({ service: t.service, tls: creds, hostname: 'mg.test' });
      const { port } = await s.listen({ port: 0 });
      try {
        const c = await RawLmtp.connect({ port });
        await c.reply();
        expect((await c.cmd('LHLO x')).text).toMatch(/^250[- ]STARTTLS/m);
        expect((await c.cmd('STARTTLS')).text).toMatch(/^220 2\.0\.0 /);
        c.socket.removeAllListeners('data');
        const sec = tls.connect({ socket: c.socket, rejectUnauthorized: false });
        await new Promise((r) => sec.once('secureConnect', r));
        let buf = '';
        sec.setEncoding('latin1');
        const next = () =>
          new Promise((resolve) => {
            const check = () => {
              const m = /^(?:\d{3}-[^\n]*\n)*\d{3} [^\n]*\n/.exec(buf);
              if (!m) return sec.once('data', (d) => ((buf += d), check()));
              buf = buf.slice(m[0].length);
              resolve(m[0]);
            };
            check();
          });
        sec.write('MAIL FROM:<>\r\n');
        expect(await next()).toMatch(/^503 5\.5\.1 LHLO first/);
        sec.write('LHLO x\r\n');
        expect(await next()).not.toMatch(/STARTTLS/);
        sec.write('MAIL FROM:<>\r\nRCPT TO:<bob@example.com>\r\nDATA\r\n');
        expect(await next()).toMatch(/^250/);
        expect(await next()).toMatch(/^250/);
        expect(await next()).toMatch(/^354/);
        sec.write('Subject: tls\r\n\r\nsecret\r\n.\r\n');
        expect(await next()).toMatch(/^250 2\.0\.0 /);
        sec.destroy();
      } finally {
        await s.close();
      }
    },
  );
});
