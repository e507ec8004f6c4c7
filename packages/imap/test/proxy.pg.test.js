'use strict';

const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { createMailService } = require('@mailgate/service');
const { createTestDatabase } = require('@mailgate/test-support/db');
const { createImapServer } = require('../lib');
const { openUpstream } = require('../lib/proxy');
const { RawClient } = require('./raw-client');

/*
 * The migration proxy's wire behaviour against a scripted upstream server (no Dovecot needed;
 * test/migrate-proxy.test.js runs the whole migration on a real one): mailgate authenticates
 * first and never contacts upstream for a wrong password; upstream failures answer
 * NO [UNAVAILABLE] without leaking upstream text; after the login both directions are relayed
 * byte for byte (pipelined commands, literals, binary); a route switch to `store` closes the
 * relayed session and the next login is served by the store.
 */

const UP_PW = 'upstream "secret" \\ pw';
const PAT_PW = 'pat pw';

/** An IMAP server that logs `alice` in and then records every byte it gets. */
function fakeUpstream() {
  const up = { connections: 0, logins: [], received: Buffer.alloc(0), sockets: [] };
  up.server = net.createServer((sock) => {
    up.connections++;
    up.sockets.push(sock);
    let loggedIn = false;
    let buf = '';
    sock.on('error', () => {});
    sock.write('* OK [CAPABILITY IMAP4rev1 IDLE] fake upstream ready\r\n');
    sock.on('data', (d) => {
      if (loggedIn) {
        up.received = Buffer.concat([up.received, d]);
        up.onData?.(sock);
        return;
      }
      buf += d.toString('latin1');
      const nl = buf.indexOf('\r\n');
      if (nl < 0) return;
      const line = buf.slice(0, nl);
      const rest = Buffer.from(buf.slice(nl + 2), 'latin1');
      buf = '';
      up.logins.push(line);
      const ok = line === `mg2 LOGIN "alice" ${JSON.stringify(UP_PW)}`;
      if (!ok) {
        sock.write('mg2 NO [AUTHENTICATIONFAILED] upstream-internal-detail\r\n');
        return;
      }
      loggedIn = true;
      sock.write('mg2 OK [CAPABILITY IMAP4rev1 IDLE XFAKE] Logged in\r\n');
      if (rest.length) up.received = Buffer.concat([up.received, rest]);
    });
  });
  return up;
}

const waitUntil = async (fn, ms = 5000) => {
  const t0 = Date.now();
  while (!(await fn())) {
    if (Date.now() - t0 > ms) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('IMAP migration proxy (scripted upstream)', () => {
  let db;
  let home;
  let service;
  let server;
  let port;
  let up;
  const legacy = (entry) =>
    fs.writeFileSync(path.join(home, 'legacy.json'), JSON.stringify({ users: entry }));

  beforeAll(async () => {
    up = fakeUpstream();
    await new Promise((r) => up.server.listen(0, '127.0.0.1', r));
    db = await createTestDatabase();
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-proxy-'));
    const imap = (login, port2) => ({
      imap: { host: '127.0.0.1', port: port2, login, passwordEnv: 'UP_PW', tls: false },
    });
    const closedPort = await new Promise((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = s.address().port;
        s.close(() => resolve(p));
      });
    });
    legacy({
      pat: imap('alice', up.server.address().port),
      bob: imap('bob', up.server.address().port), // refused upstream
      dan: imap('alice', closedPort), // upstream down
      // No security setting: STARTTLS required, and the fake upstream does not offer it.
      sam: {
        imap: {
          host: '127.0.0.1',
          port: up.server.address().port,
          login: 'alice',
          passwordEnv: 'UP_PW',
        },
      },
    });
    service = await createMailService({
      knex: db.knex,
      env: { MAILGATE_HOME: home, LOG_LEVEL: 'silent', UP_PW },
    });
    for (const u of ['pat', 'bob', 'dan', 'eve', 'sam']) {
      await service.users.create(u, { password: PAT_PW });
      await service.users.setRoute(u, 'proxy');
    }
    server = createImapServer({ service, limits: { idlePollMs: 50 } });
    ({ port } = await server.listen({ port: 0, host: '127.0.0.1' }));
  });

  afterAll(async () => {
    await server.close();
    await service.close();
    for (const s of up.sockets) s.destroy();
    await new Promise((r) => up.server.close(r));
    await db.drop();
    fs.rmSync(home, { recursive: true, force: true });
  });

  test('a wrong mailgate password is refused by mailgate; upstream is never contacted', async () => {
    const before = up.connections;
    const c = await RawClient.connect(port);
    expect(await c.cmd('a', `LOGIN pat "${UP_PW.replace(/["\\]/g, '\\$&')}"`)).toMatch(
      /^a NO \[AUTHENTICATIONFAILED\]/m,
    );
    c.close();
    expect(up.connections).toBe(before);
  });

  test('upstream refusing, down, or not configured: NO [UNAVAILABLE], no upstream text', async () => {
    for (const user of ['bob', 'dan', 'eve']) {
      const c = await RawClient.connect(port);
      const r = await c.cmd('a', `LOGIN ${user} "${PAT_PW}"`);
      expect(r).toMatch(/^a NO \[UNAVAILABLE\] /m);
      expect(r).not.toMatch(/upstream-internal-detail|127\.0\.0\.1|ECONNREFUSED/);
      // Still a mailgate session in the not-authenticated state.
      expect(await c.cmd('b', 'NOOP')).toMatch(/^b OK/m);
      c.close();
    }
    expect(up.logins).toContain('mg2 LOGIN "bob" ' + JSON.stringify(UP_PW));
  });

  test('a LOGIN retried against an unavailable upstream does not use up the connection slots', async () => {
    const limited = createImapServer({
      service,
      limits: { idlePollMs: 50, maxConnectionsPerUser: 2 },
    });
    const { port: p2 } = await limited.listen({ port: 0, host: '127.0.0.1' });
    try {
      const c = await RawClient.connect(p2);
      for (let i = 0; i < 4; i++) {
        expect(await c.cmd(`a${i}`, `LOGIN dan "${PAT_PW}"`)).toMatch(/ NO \[UNAVAILABLE\] /);
      }
      // Another client of the same user is not locked out either.
      const d = await RawClient.connect(p2);
      expect(await d.cmd('b', `LOGIN dan "${PAT_PW}"`)).toMatch(/^b NO \[UNAVAILABLE\] /m);
      expect(limited.perUser.has('dan')).toBe(false);
      c.close();
      d.close();
    } finally {
      await limited.close();
    }
  });

  test('shutdown closes a relayed session without writing BYE into the relayed bytes', async () => {
    const other = createImapServer({ service, limits: { idlePollMs: 50 } });
    const { port: p2 } = await other.listen({ port: 0, host: '127.0.0.1' });
    const c = await RawClient.connect(p2);
    expect(await c.cmd('a', `LOGIN pat "${PAT_PW}"`)).toMatch(/^a OK /m);
    // Upstream is in the middle of a literal when mailgate shuts down.
    up.sockets[up.sockets.length - 1].write('* 1 FETCH (BODY[] {10}\r\nabc');
    await c.waitFor(/\{10\}\r\nabc/);
    await other.close({ timeoutMs: 2000 });
    await waitUntil(() => c.closed);
    expect(c.buf.toString('latin1')).not.toMatch(/BYE/);
    expect(other.proxySessions.size).toBe(0);
  });

  test('a relay silent both ways past relayIdleTimeout is closed and frees its slot', async () => {
    const other = createImapServer({ service, limits: { idlePollMs: 50, relayIdleTimeout: 300 } });
    const { port: p2 } = await other.listen({ port: 0, host: '127.0.0.1' });
    try {
      const c = await RawClient.connect(p2);
      expect(await c.cmd('a', `LOGIN pat "${PAT_PW}"`)).toMatch(/^a OK /m);
      const upstreamSock = up.sockets[up.sockets.length - 1];
      const upClosed = new Promise((r) => upstreamSock.once('close', r));
      expect(other.perUser.get('pat')).toBe(1);
      await waitUntil(() => c.closed);
      await upClosed;
      // The session ends when mailgate's side of the client socket has closed too.
      await waitUntil(() => !other.perUser.has('pat') && other.proxySessions.size === 0);
    } finally {
      await other.close();
    }
  });

  test('the upstream login has one deadline: an upstream trickling lines cannot extend it', async () => {
    const trickle = net.createServer((sock) => {
      sock.on('error', () => {});
      sock.write('* OK [CAPABILITY IMAP4rev1] slow\r\n');
      // Untagged lines forever, never the tagged answer to LOGIN.
      sock.once('data', () => {
        const t = setInterval(() => sock.write('* OK still here\r\n'), 50);
        sock.on('close', () => clearInterval(t));
      });
    });
    await new Promise((r) => trickle.listen(0, '127.0.0.1', r));
    try {
      const acct = {
        host: '127.0.0.1',
        port: trickle.address().port,
        login: 'alice',
        password: UP_PW,
        security: 'plaintext',
      };
      await expect(openUpstream(acct, { timeoutMs: 400 })).rejects.toThrow(/timeout/);
    } finally {
      await new Promise((r) => trickle.close(r));
    }
  }, 4000);

  test('a store session of a user routed to proxy meanwhile: APPEND and STORE are refused', async () => {
    await service.users.create('ivy', { password: PAT_PW });
    const c = await RawClient.connect(port);
    expect(await c.cmd('a', `LOGIN ivy "${PAT_PW}"`)).toMatch(/^a OK /m);
    expect(await c.cmd('b', 'APPEND INBOX {5+}\r\nhello')).toMatch(/^b OK /m);
    // `mailgate migrate ivy --on-login`: the route flips while this store session lives.
    await service.users.setRoute('ivy', 'proxy');
    expect(await c.cmd('c', 'APPEND INBOX {5+}\r\nworld')).toMatch(
      /^c NO \[INUSE\] .*being migrated/m,
    );
    expect(await c.cmd('d', 'SELECT INBOX')).toMatch(/^d OK /m);
    expect(await c.cmd('e', 'UID STORE 1 +FLAGS (\\Seen)')).toMatch(/^e NO \[INUSE\] /m);
    // Unchanged: no \Seen; \Recent is this session's since its SELECT claimed the message.
    expect(await c.cmd('f', 'UID FETCH 1:* (FLAGS)')).toMatch(
      /\* 1 FETCH \(UID 1 FLAGS \(\\Recent\)\)[\s\S]*^f OK/m,
    );
    c.close();
  });

  test('STARTTLS required by default: an upstream without it never sees the password', async () => {
    const before = up.logins.length;
    const connections = up.connections;
    const c = await RawClient.connect(port);
    const r = await c.cmd('a', `LOGIN sam "${PAT_PW}"`);
    expect(r).toMatch(/^a NO \[UNAVAILABLE\] /m);
    c.close();
    expect(up.connections).toBe(connections + 1);
    expect(up.logins.slice(before)).toEqual([]);
    expect(server.proxySessions.size).toBe(0);
  });

  test('after login both directions are relayed byte for byte, pipelined commands included', async () => {
    up.received = Buffer.alloc(0);
    const c = await RawClient.connect(port);
    // The login and two commands behind it in one write: the two go upstream as sent.
    const pipelined = Buffer.from('b NOOP\r\nc APPEND INBOX {5+}\r\nhe\r\nl\r\n', 'latin1');
    c.write(Buffer.concat([Buffer.from(`a LOGIN pat "${PAT_PW}"\r\n`), pipelined]));
    const ok = await c.waitFor(/^a (OK|NO|BAD)[^\r\n]*\r\n/m);
    expect(ok).toMatch(/^a OK \[CAPABILITY IMAP4rev1 IDLE XFAKE\] /m);
    await waitUntil(() => up.received.length >= pipelined.length);
    expect(up.received.equals(pipelined)).toBe(true);
    // Arbitrary bytes both ways, unparsed: NUL, 8-bit, a bare LF, no command syntax at all.
    const binary = Buffer.from([0, 255, 10, 13, 42, 123, 57, 57, 57, 125, 0x80]);
    up.received = Buffer.alloc(0);
    c.write(binary);
    await waitUntil(() => up.received.length >= binary.length);
    expect(up.received.equals(binary)).toBe(true);
    const reply = Buffer.concat([
      Buffer.from('* 1 FETCH (BODY[] {4}\r\n', 'latin1'),
      Buffer.from([0, 1, 254, 10]),
      Buffer.from(')\r\nb OK done\r\n'),
    ]);
    up.sockets[up.sockets.length - 1].write(reply);
    await c.waitFor(/b OK done\r\n/);
    expect(server.proxySessions.size).toBe(1);
    c.close();
    await waitUntil(() => server.proxySessions.size === 0);
  });

  test('the raw bytes the client gets are exactly the upstream bytes', async () => {
    const c = await RawClient.connect(port);
    await c.cmd('a', `LOGIN pat "${PAT_PW}"`);
    const reply = Buffer.concat([Buffer.from([0xff, 0, 13, 10]), Buffer.from('x'.repeat(70000))]);
    const got = [];
    c.socket.removeAllListeners('data');
    c.socket.on('data', (d) => got.push(d));
    up.sockets[up.sockets.length - 1].write(reply);
    await waitUntil(() => Buffer.concat(got).length >= reply.length);
    expect(Buffer.concat(got).equals(reply)).toBe(true);
    c.close();
  });

  test('route checks never overlap: a check slower than the poll is not started again before it ends', async () => {
    // A database slower than idlePollMs (50 ms here) used to stack one more route query per
    // tick, each holding a pool connection, until the pool was empty.
    const real = service.users.proxied;
    let running = 0;
    let most = 0;
    let calls = 0;
    service.users.proxied = async (names) => {
      running += 1;
      calls += 1;
      most = Math.max(most, running);
      try {
        await new Promise((r) => setTimeout(r, 300));
        return await real.call(service.users, names);
      } finally {
        running -= 1;
      }
    };
    const c = await RawClient.connect(port);
    try {
      expect(await c.cmd('a', `LOGIN pat "${PAT_PW}"`)).toMatch(/^a OK/m);
      await waitUntil(() => calls >= 3, 10000);
      expect(most).toBe(1);
      expect(c.closed).toBe(false);
    } finally {
      service.users.proxied = real;
      c.close();
    }
  });

  test('a route switch to store closes the relayed session; the next login uses the store', async () => {
    const c = await RawClient.connect(port);
    await c.cmd('a', `LOGIN pat "${PAT_PW}"`);
    const upstreamSock = up.sockets[up.sockets.length - 1];
    const upClosed = new Promise((r) => upstreamSock.once('close', r));
    await service.users.setRoute('pat', 'store');
    await waitUntil(() => c.closed);
    await upClosed;
    const d = await RawClient.connect(port);
    const r = await d.cmd('a', `LOGIN pat "${PAT_PW}"`);
    expect(r).toMatch(/^a OK \[CAPABILITY [^\]]*QRESYNC/m);
    expect(await d.cmd('b', 'SELECT INBOX')).toMatch(/^b OK \[READ-WRITE\]/m);
    d.close();
  });
});
