'use strict';

const { skipNotice } = require('@mailgate/test-support/skip');
const { selfSignedCert } = require('@mailgate/test-support/tls');
const { ImapFlow } = require('imapflow');
const { createImapServer } = require('../lib');
const { MemoryService } = require('./memory-service');
const { RawClient } = require('./raw-client');
const { loopbackClient } = require('./helpers');
const { toCrlf } = require('@mailgate/mime/crlf');

const MSG1 = [
  'From: Alice Example <alice@example.com>',
  'To: Bob <bob@example.org>, carol@example.net',
  'Subject: Hello there',
  'Date: Mon, 2 Mar 2020 10:00:00 +0000',
  'Message-ID: <m1@example.com>',
  '',
  'First line of the body.',
  'Second line.',
  '',
].join('\r\n');

const MSG2 = [
  'From: "Dave, D." <dave@example.com>',
  'To: Undisclosed: ;',
  'Subject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe?=',
  'MIME-Version: 1.0',
  'Content-Type: multipart/mixed; boundary="XX"',
  '',
  'preamble',
  '--XX',
  'Content-Type: text/plain; charset=utf-8',
  '',
  'part one text',
  '--XX',
  'Content-Type: application/octet-stream; name="a.bin"',
  'Content-Disposition: attachment; filename="a.bin"',
  'Content-Transfer-Encoding: base64',
  '',
  'AAEC',
  '--XX--',
  '',
].join('\r\n');

let service;
let server;
let port;

beforeAll(async () => {
  service = new MemoryService();
  await service.addUser('alice', 'secret one');
  await service.addUser('bob', 'secret two');
  const be = await service.openBackend('memory', 'alice');
  await be.append('INBOX', Buffer.from(MSG1), {
    flags: ['\\Seen'],
    internalDate: new Date('2020-03-02T10:00:05Z'),
  });
  await be.append('INBOX', Buffer.from(MSG2), { internalDate: new Date('2021-01-01T00:00:00Z') });
  await be.createMailbox('Archive/2020');
  await be.createMailbox('Trash');
  server = createImapServer({ service, limits: { maxLiteral: 1024 * 1024, idlePollMs: 50 } });
  ({ port } = await server.listen({ port: 0 }));
});

afterAll(async () => {
  await server.close();
});

function client(user = 'alice', pass = 'secret one') {
  return loopbackClient(port, user, pass);
}

test('greeting, CAPABILITY before and after login, LOGINDISABLED absent on loopback', async () => {
  const c = await RawClient.connect(port);
  const caps = await c.cmd('a1', 'CAPABILITY');
  expect(caps).toMatch(/^\* CAPABILITY IMAP4rev1 .*AUTH=PLAIN/m);
  expect(caps).not.toMatch(/LOGINDISABLED/);
  const login = await c.cmd('a2', 'LOGIN alice "secret one"');
  expect(login).toMatch(/^a2 OK \[CAPABILITY [^\]]*UIDPLUS[^\]]*\] Logged in/m);
  expect(await c.cmd('a3', 'LOGOUT')).toMatch(/^\* BYE[^\r]*\r\na3 OK/m);
  c.close();
});

test('wrong password and unknown user get the same NO [AUTHENTICATIONFAILED]', async () => {
  const c = await RawClient.connect(port);
  const a = await c.cmd('a1', 'LOGIN alice wrong');
  const b = await c.cmd('a2', 'LOGIN nobody wrong');
  expect(a).toMatch(/^a1 NO \[AUTHENTICATIONFAILED\] Authentication failed/m);
  expect(b.replace('a2', 'a1')).toBe(a);
  expect(await c.cmd('a3', 'SELECT INBOX')).toMatch(/^a3 BAD/m);
  c.close();
});

test('AUTHENTICATE PLAIN with continuation and with SASL-IR', async () => {
  const c = await RawClient.connect(port);
  c.write('a1 AUTHENTICATE PLAIN\r\n');
  await c.waitFor(/^\+ \r\n/m);
  c.write(Buffer.from('\0alice\0secret one').toString('base64') + '\r\n');
  expect(await c.waitFor(/^a1 .*\r\n/m)).toMatch(/^a1 OK/m);
  c.close();
  const d = await RawClient.connect(port);
  const ir = Buffer.from('\0bob\0secret two').toString('base64');
  expect(await d.cmd('b1', `AUTHENTICATE PLAIN ${ir}`)).toMatch(/^b1 OK/m);
  d.close();
});

test('imapflow: list, select, fetch envelope/bodystructure/body, search, store, copy, move, expunge', async () => {
  const c = client();
  await c.connect();
  const boxes = await c.list();
  const byPath = Object.fromEntries(boxes.map((b) => [b.path, b]));
  expect(Object.keys(byPath).sort()).toEqual(['Archive', 'Archive/2020', 'INBOX', 'Trash']);
  expect(byPath.Archive.flags.has('\\Noselect')).toBe(true);
  expect(byPath.Trash.specialUse).toBe('\\Trash');
  const mb = await c.mailboxOpen('INBOX');
  expect(mb.exists).toBe(2);
  const msgs = [];
  for await (const m of c.fetch('1:*', {
    uid: true,
    flags: true,
    envelope: true,
    bodyStructure: true,
    size: true,
    internalDate: true,
  })) {
    msgs.push(m);
  }
  expect(msgs.map((m) => m.uid)).toEqual([1, 2]);
  expect(msgs[0].envelope.subject).toBe('Hello there');
  expect(msgs[0].envelope.from).toEqual([{ name: 'Alice Example', address: 'alice@example.com' }]);
  expect(msgs[0].envelope.to.map((a) => a.address)).toEqual([
    'bob@example.org',
    'carol@example.net',
  ]);
  expect(msgs[0].envelope.messageId).toBe('<m1@example.com>');
  expect(msgs[0].size).toBe(Buffer.byteLength(MSG1));
  expect(msgs[0].internalDate.toISOString()).toBe('2020-03-02T10:00:05.000Z');
  expect(msgs[1].envelope.subject).toBe('Grüße');
  expect(msgs[1].envelope.from[0]).toEqual({ name: 'Dave, D.', address: 'dave@example.com' });
  expect(msgs[1].bodyStructure.type).toBe('multipart/mixed');
  expect(msgs[1].bodyStructure.childNodes.map((n) => n.type)).toEqual([
    'text/plain',
    'application/octet-stream',
  ]);
  expect(msgs[1].bodyStructure.childNodes[1].dispositionParameters).toEqual({ filename: 'a.bin' });
  expect([...msgs[0].flags]).toEqual(['\\Seen']);

  const whole = await c.fetchOne('2', { source: true });
  expect(whole.source.toString()).toBe(MSG2);
  const parts = await c.fetchOne('2', { bodyParts: ['1', '2.MIME'] });
  expect(parts.bodyParts.get('1').toString()).toBe('part one text');
  expect(parts.bodyParts.get('2.mime').toString()).toMatch(
    /^Content-Type: application\/octet-stream/,
  );

  expect(await c.search({ from: 'alice' })).toEqual([1]);
  expect(await c.search({ seen: false })).toEqual([2]);
  expect(await c.search({ or: [{ subject: 'hello' }, { body: 'part one' }] })).toEqual([1, 2]);
  expect(await c.search({ since: new Date('2020-06-01') })).toEqual([2]);
  expect(await c.search({ header: { 'message-id': 'm1@' } })).toEqual([1]);
  expect(await c.search({ uid: '2:*', text: 'text' }, { uid: true })).toEqual([2]);

  await c.messageFlagsAdd('2', ['\\Flagged', '$Label1']);
  const f = await c.fetchOne('2', { flags: true });
  expect([...f.flags].sort()).toEqual(['$Label1', '\\Flagged']);
  expect(await c.search({ keyword: '$Label1' })).toEqual([2]);

  const copied = await c.messageCopy('1', 'Trash');
  expect(copied.uidMap.get(1)).toBe(1);
  const moved = await c.messageMove('2', 'Archive/2020', { uid: true });
  expect(moved.uidMap.get(2)).toBe(1);
  expect(c.mailbox.exists).toBe(1);
  await c.messageFlagsAdd('1', ['\\Deleted']);
  await c.messageDelete('1');
  expect(c.mailbox.exists).toBe(0);
  const st = await c.status('Archive/2020', { messages: true, uidNext: true, unseen: true });
  expect(st).toMatchObject({ messages: 1, uidNext: 2, unseen: 1 });
  await c.logout();
});

test("APPEND keeps bytes exactly and answers APPENDUID; IDLE sees another session's append", async () => {
  const a = client();
  const b = client();
  await a.connect();
  await b.connect();
  await a.mailboxCreate('Lists');
  await a.mailboxOpen('Lists');
  const seen = new Promise((resolve) => a.on('exists', resolve));
  const idling = a.idle();
  const raw = Buffer.from('Subject: lf only\n\nbody\n\x00\xff\n', 'latin1');
  const r = await b.append('Lists', raw, ['\\Draft'], new Date('2019-05-05T05:05:05Z'));
  expect(r.uid).toBe(1);
  expect((await seen).count).toBe(1);
  const back = await b
    .mailboxOpen('Lists')
    .then(() => b.fetchOne('1', { source: true, flags: true, internalDate: true }));
  // Stored exactly as appended; served with CRLF line ends (RFC 3501 2.2, issue 28 item 11).
  expect(Buffer.compare(back.source, toCrlf(raw))).toBe(0);
  const stored = await (await service.openBackend('memory', 'alice')).getRaw('Lists', 1);
  expect(Buffer.compare(stored, raw)).toBe(0);
  expect([...back.flags]).toEqual(['\\Draft']);
  expect(back.internalDate.toISOString()).toBe('2019-05-05T05:05:05.000Z');
  await a.logout();
  await idling;
  await b.logout();
});

test('rename, delete, subscribe, namespace, id, enable over the raw wire', async () => {
  const c = await RawClient.connect(port);
  await c.cmd('a1', 'LOGIN bob "secret two"');
  expect(await c.cmd('a2', 'CREATE Work')).toMatch(/^a2 OK/m);
  expect(await c.cmd('a3', 'CREATE Work')).toMatch(/^a3 NO \[ALREADYEXISTS\]/m);
  expect(await c.cmd('a4', 'RENAME Work Job')).toMatch(/^a4 OK/m);
  expect(await c.cmd('a5', 'SUBSCRIBE Job')).toMatch(/^a5 OK/m);
  expect(await c.cmd('a6', 'LSUB "" "*"')).toMatch(/^\* LSUB \(\\HasNoChildren\) "\/" "Job"\r\n/m);
  expect(await c.cmd('a7', 'DELETE Job')).toMatch(/^a7 OK/m);
  expect(await c.cmd('a8', 'DELETE INBOX')).toMatch(/^a8 NO/m);
  expect(await c.cmd('a9', 'NAMESPACE')).toMatch(/^\* NAMESPACE \(\("" "\/"\)\) NIL NIL\r\n/m);
  expect(await c.cmd('b1', 'ID ("name" "test")')).toMatch(/^\* ID \("name" "mailgate"/m);
  expect(await c.cmd('b2', 'ENABLE QRESYNC')).toMatch(/^\* ENABLED QRESYNC\r\n/m);
  expect(await c.cmd('b3', 'LIST "" ""')).toMatch(/^\* LIST \(\\Noselect\) "\/" ""\r\n/m);
  expect(await c.cmd('b4', 'STATUS INBOX (MESSAGES UIDNEXT HIGHESTMODSEQ)')).toMatch(
    /^\* STATUS "INBOX" \(MESSAGES 0 UIDNEXT 1 HIGHESTMODSEQ 1\)\r\n/m,
  );
  c.close();
});

test("a session's own STORE and UID EXPUNGE are not reported back; another session's change between is", async () => {
  // The session skips reading its own change back only when that change follows the view's
  // modseq directly (view.noteOwnModseq); a change by another session in between must still
  // reach it, and UID EXPUNGE takes only the \\Deleted messages of its set (RFC 4315 2.1).
  await service.addUser('carol', 'secret three');
  const be = await service.openBackend('memory', 'carol');
  await be.createMailbox('Edge');
  for (const n of [1, 2, 3]) {
    await be.append('Edge', Buffer.from(MSG1.replace('<m1@', `<edge${n}@`)), {});
  }
  const a = await RawClient.connect(port);
  const b = await RawClient.connect(port);
  await a.cmd('a1', 'LOGIN carol "secret three"');
  await b.cmd('b1', 'LOGIN carol "secret three"');
  expect(await a.cmd('a2', 'SELECT Edge')).toMatch(/^\* 3 EXISTS/m);
  await b.cmd('b2', 'SELECT Edge');
  // Own change, contiguous: silent, and nothing on the next command either.
  const own = await a.cmd('a3', 'UID STORE 1 +FLAGS.SILENT (\\Flagged)');
  expect(own).toMatch(/^a3 OK/m);
  expect(own).not.toMatch(/FETCH/);
  expect(await a.cmd('a4', 'NOOP')).not.toMatch(/FETCH/);
  // Another session's change first, then this session's own: the other one is reported.
  expect(await b.cmd('b3', 'UID STORE 2 +FLAGS.SILENT (\\Seen)')).toMatch(/^b3 OK/m);
  const gap = await a.cmd('a5', 'UID STORE 3 +FLAGS.SILENT (\\Flagged)');
  expect(gap).toMatch(/^\* 2 FETCH \(UID 2 FLAGS \(\\Seen\)\)\r\n/m);
  expect(gap).not.toMatch(/^\* [13] FETCH/m);
  // UID EXPUNGE of 1:2 with only uid 1 \\Deleted: uid 1 goes, once, uid 2 stays.
  await a.cmd('a6', 'UID STORE 1 +FLAGS.SILENT (\\Deleted)');
  const ex = await a.cmd('a7', 'UID EXPUNGE 1:2');
  expect(ex.match(/^\* \d+ EXPUNGE/gm)).toEqual(['* 1 EXPUNGE']);
  expect(await a.cmd('a8', 'NOOP')).not.toMatch(/EXPUNGE|FETCH/);
  expect(await a.cmd('a9', 'UID SEARCH ALL')).toMatch(/^\* SEARCH 2 3\r\n/m);
  // The other session hears of the expunge and of the flag changes it did not make.
  const other = await b.cmd('b4', 'NOOP');
  expect(other).toMatch(/^\* 1 EXPUNGE\r\n/m);
  expect(other).toMatch(/^\* 2 FETCH \(UID 3 FLAGS \(\\Flagged\)\)\r\n/m);
  a.close();
  b.close();
});

test('hostile and malformed commands get a tagged BAD and the session goes on', async () => {
  const c = await RawClient.connect(port);
  await c.cmd('a1', 'LOGIN alice "secret one"');
  await c.cmd('a2', 'SELECT Trash');
  for (const [tag, text] of [
    ['b1', 'FETCH'],
    ['b2', 'FETCH 0 FLAGS'],
    ['b3', 'FETCH 1 (FLAGS'],
    ['b4', 'FETCH 1 BODY[9999999999]'],
    ['b5', 'FETCH 1 BODY[HEADER.FIELDS ()]'],
    ['b6', 'SEARCH ' + 'NOT '.repeat(500) + 'ALL'],
    ['b7', 'SEARCH UNKNOWNKEY'],
    ['b8', 'STORE 1 +FLAGS (\\Bogus)'],
    ['b9', 'UID FROB 1'],
    ['c1', 'XYZZY'],
    ['c2', 'SEARCH SINCE 31-Feb-2020'],
    ['c3', 'FETCH 1:* (BODY[]<0.0>)'],
  ]) {
    expect(await c.cmd(tag, text)).toMatch(new RegExp(`^${tag} BAD`, 'm'));
  }
  expect(await c.cmd('d1', 'NOOP')).toMatch(/^d1 OK/m);
  c.close();
});

test('the failed-login limiter of @mailgate/core refuses after too many failures', async () => {
  const { LoginLimiter } = require('@mailgate/core');
  const strict = createImapServer({
    service,
    limiter: new LoginLimiter({ userAddressMax: 2, accountFree: 100 }),
  });
  const { port: p } = await strict.listen({ port: 0 });
  try {
    const c = await RawClient.connect(p);
    expect(await c.cmd('a1', 'LOGIN alice x1')).toMatch(/^a1 NO \[AUTHENTICATIONFAILED\]/m);
    expect(await c.cmd('a2', 'LOGIN alice x2')).toMatch(/^a2 NO \[AUTHENTICATIONFAILED\]/m);
    // Blocked now, even with the right password.
    expect(await c.cmd('a3', 'LOGIN alice "secret one"')).toMatch(/^a3 NO \[UNAVAILABLE\]/m);
    c.close();
  } finally {
    await strict.close();
  }
});

describe('TLS', () => {
  const fs = require('node:fs');
  const tls = require('node:tls');
  let dir;
  let key;
  let cert;
  let hasOpenssl = true;
  beforeAll(() => {
    const made = selfSignedCert('imap');
    dir = made.dir;
    if (made.creds) {
      ({ key, cert } = made.creds);
    } else {
      hasOpenssl = false;
      skipNotice(__filename, 'openssl is not installed', 'TLS tests');
    }
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('off loopback without a certificate: the refusal names what the server lacks, not STARTTLS', async () => {
    const remote = createImapServer({ service, trustLoopback: false });
    const { port: p } = await remote.listen({ port: 0 });
    try {
      const c = await RawClient.connect(p);
      expect(await c.cmd('a1', 'CAPABILITY')).not.toMatch(/STARTTLS/);
      const r = await c.cmd('a2', 'LOGIN alice "secret one"');
      expect(r).toMatch(
        /^a2 NO \[PRIVACYREQUIRED\] .*no TLS certificate \(IMAP_TLS_CERT, IMAP_TLS_KEY\)/m,
      );
      expect(r).not.toMatch(/STARTTLS/);
      c.close();
    } finally {
      await remote.close();
    }
  });

  test('off loopback: LOGINDISABLED until STARTTLS, then LOGIN works inside TLS', async () => {
    if (!hasOpenssl) return;
    // Treat loopback like a remote address: what a client on the network sees.
    const remote = createImapServer({ service, tls: { key, cert }, trustLoopback: false });
    const { port: p } = await remote.listen({ port: 0 });
    try {
      const c = await RawClient.connect(p);
      const caps = await c.cmd('a1', 'CAPABILITY');
      expect(caps).toMatch(/STARTTLS/);
      expect(caps).toMatch(/LOGINDISABLED/);
      expect(caps).not.toMatch(/AUTH=PLAIN/);
      expect(await c.cmd('a2', 'LOGIN alice "secret one"')).toMatch(
        /^a2 NO \[PRIVACYREQUIRED\] Plaintext login is disabled; use STARTTLS/m,
      );
      const ir = Buffer.from('\0alice\0secret one').toString('base64');
      expect(await c.cmd('a3', `AUTHENTICATE PLAIN ${ir}`)).toMatch(/^a3 NO \[PRIVACYREQUIRED\]/m);
      // Bytes pipelined after STARTTLS are dropped, not run inside TLS.
      c.write('a4 STARTTLS\r\na5 LOGIN alice "secret one"\r\n');
      await c.waitFor(/^a4 OK[^\r]*\r\n/m);
      c.socket.removeAllListeners('data');
      const secure = tls.connect({ socket: c.socket, rejectUnauthorized: false });
      await new Promise((resolve) => secure.once('secureConnect', resolve));
      let got = '';
      secure.on('data', (d) => (got += d.toString('latin1')));
      const until = async (re) => {
        for (let i = 0; i < 200 && !re.test(got); i++) await new Promise((r) => setTimeout(r, 10));
        return got;
      };
      secure.write('b1 CAPABILITY\r\n');
      await until(/^b1 OK/m);
      expect(got).not.toMatch(/^a5 /m);
      expect(got).not.toMatch(/STARTTLS|LOGINDISABLED/);
      expect(got).toMatch(/AUTH=PLAIN/);
      secure.write('b2 LOGIN alice "secret one"\r\n');
      expect(await until(/^b2 (OK|NO|BAD)/m)).toMatch(/^b2 OK/m);
      secure.destroy();
    } finally {
      await remote.close();
    }
  });

  test('implicit TLS port', async () => {
    if (!hasOpenssl) return;
    const s = createImapServer({ service, tls: { key, cert }, trustLoopback: false });
    const { port: p } = await s.listen({ port: 0, implicitTls: true });
    try {
      const c = new ImapFlow({
        host: '127.0.0.1',
        port: p,
        secure: true,
        tls: { rejectUnauthorized: false },
        auth: { user: 'alice', pass: 'secret one' },
        logger: false,
      });
      await c.connect();
      expect((await c.status('INBOX', { messages: true })).messages).toBeGreaterThanOrEqual(0);
      await c.logout();
    } finally {
      await s.close();
    }
  });
});
