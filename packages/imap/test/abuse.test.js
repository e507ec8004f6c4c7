'use strict';

/*
 * The IMAP abuse suite (issue 29): the inputs that froze or filled the server, each sent by an
 * attacker while an innocent second client (another user, on another loopback address) keeps
 * working. Every test asserts what the attacker gets and that the innocent client was served
 * during the attack; the innocent client's latencies are printed as a report, never asserted
 * (the machine is shared). The server runs on the in-memory service (no database), in this
 * process: an attack that blocks the event loop blocks the innocent client too.
 */

const { createImapServer } = require('../lib');
const { MemoryService } = require('./memory-service');
const { RawClient } = require('./raw-client');

const INNOCENT_ADDRESS = '127.0.0.2';

/** A server on the in-memory service with alice (attacker) and bob (innocent). */
async function startServer(limits = {}, setup = async () => {}) {
  const service = new MemoryService();
  await service.addUser('alice', 'attacker pw');
  await service.addUser('bob', 'innocent pw');
  const bob = await service.openBackend('memory', 'bob');
  for (let i = 1; i <= 3; i++) {
    await bob.append('INBOX', Buffer.from(`Subject: hello ${i}\r\n\r\nbody ${i}\r\n`));
  }
  await setup(service);
  const server = createImapServer({ service, limits: { idlePollMs: 50, ...limits } });
  const { port } = await server.listen({ port: 0, host: '127.0.0.1' });
  return { service, server, port };
}

/**
 * The innocent client: bob, logged in from another address, running NOOP, LIST and FETCH in
 * turn until stopped; each answer must be OK.
 */
async function innocent(port) {
  const c = await RawClient.connect(port, '127.0.0.1', { localAddress: INNOCENT_ADDRESS });
  expect(await c.cmd('i0', 'LOGIN bob "innocent pw"')).toMatch(/^i0 OK/m);
  expect(await c.cmd('i1', 'SELECT INBOX')).toMatch(/^i1 OK/m);
  const latencies = [];
  const answers = [];
  let stop = false;
  let n = 2;
  const loop = (async () => {
    const commands = ['NOOP', 'LIST "" "*"', 'FETCH 1:* (FLAGS)'];
    while (!stop) {
      const tag = `i${n++}`;
      const t0 = process.hrtime.bigint();
      const text = await c.cmd(tag, commands[n % commands.length], 120000);
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      answers.push(new RegExp(`^${tag} (\\w+)`, 'm').exec(text)[1]);
    }
  })();
  // At least one command answered before the attack starts.
  while (!answers.length) await new Promise((r) => setTimeout(r, 5));
  const during = () => answers.length;
  return {
    /** Stops after at least one command answered during the attack; returns the figures. */
    async stop(name, startedAt) {
      while (answers.length <= startedAt) await new Promise((r) => setTimeout(r, 5));
      stop = true;
      await loop;
      c.close();
      const sorted = [...latencies].sort((a, b) => a - b);
      const q = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
      console.log(
        `[imap abuse] ${name}: innocent client served ${answers.length} commands, ` +
          `latency p50 ${q(0.5).toFixed(1)} ms, p99 ${q(0.99).toFixed(1)} ms, ` +
          `max ${sorted[sorted.length - 1].toFixed(1)} ms`,
      );
      return { answers, latencies };
    },
    during,
  };
}

/** Runs attack(port) beside the innocent client; asserts the innocent client was served. */
async function besideInnocent(name, port, attack) {
  const bob = await innocent(port);
  const before = bob.during();
  const result = await attack();
  const { answers } = await bob.stop(name, before);
  expect(answers.length).toBeGreaterThan(before);
  expect(answers.filter((a) => a !== 'OK')).toEqual([]);
  return result;
}

async function attacker(port) {
  const c = await RawClient.connect(port);
  expect(await c.cmd('a0', 'LOGIN alice "attacker pw"')).toMatch(/^a0 OK/m);
  return c;
}

describe('LIST and LSUB patterns (item 1)', () => {
  let srv;
  const long = (ch) => ch.repeat(400);
  beforeAll(async () => {
    srv = await startServer({}, async (service) => {
      const be = await service.openBackend('memory', 'alice');
      for (const ch of ['a', 'b', 'c']) {
        await be.createMailbox(long(ch));
        await be.subscribe(long(ch));
        await be.createMailbox(`x/${long(ch)}`);
      }
    });
  });
  afterAll(() => srv.server.close());

  test('pathological patterns are answered, correctly, while the innocent client is served', async () => {
    const a = await attacker(srv.port);
    const answers = await besideInnocent('LIST/LSUB patterns', srv.port, async () => {
      const out = [];
      // Pipelined: the server works through all of them while bob waits for his answers.
      const cmds = [
        `LIST "" "${'%*'.repeat(300)}a"`,
        `LIST "" "${'%*'.repeat(9)}a"`,
        'LIST "" "*****a"',
        `LSUB "" "${'%*'.repeat(300)}a"`,
        `LIST "" "${'*a'.repeat(200)}"`,
        `LIST "" "${'%*'.repeat(2000)}a"`,
      ];
      a.write(cmds.map((c, i) => `p${i} ${c}\r\n`).join(''));
      for (let i = 0; i < cmds.length; i++) {
        out.push(await a.waitFor(new RegExp(`^p${i} (OK|NO|BAD)[^\\r\\n]*\\r\\n`, 'm'), 60000));
      }
      return out;
    });
    const names = (text) => [...text.matchAll(/^\* (?:LIST|LSUB) \([^)]*\) "\/" (.*)\r$/gm)];
    const quoted = (n) => names(n).map((m) => m[1].replace(/^"|"$/g, ''));
    expect(quoted(answers[0]).sort()).toEqual([long('a'), `x/${long('a')}`]);
    expect(quoted(answers[1]).sort()).toEqual([long('a'), `x/${long('a')}`]);
    expect(quoted(answers[2]).sort()).toEqual([long('a'), `x/${long('a')}`]);
    expect(quoted(answers[3])).toEqual([long('a')]);
    expect(quoted(answers[4]).sort()).toEqual([long('a'), `x/${long('a')}`]);
    expect(answers[5]).toMatch(/^p5 BAD .*too long/m);
    expect(await a.cmd('a9', 'NOOP')).toMatch(/^a9 OK/m);
    a.close();
  }, 120000);
});

describe('sequence sets (item 5)', () => {
  let srv;
  beforeAll(async () => {
    srv = await startServer({}, async (service) => {
      const be = await service.openBackend('memory', 'alice');
      for (let i = 1; i <= 20000; i++) {
        await be.append('INBOX', Buffer.from(`Subject: m${i}\r\n\r\nx\r\n`));
      }
    });
  });
  afterAll(() => srv.server.close());

  test('SEARCH and UID SEARCH with 9,999 ranges, 8 pipelined, on 20,000 messages', async () => {
    const a = await attacker(srv.port);
    expect(await a.cmd('s0', 'SELECT INBOX')).toMatch(/^\* 20000 EXISTS/m);
    const set = Array(9999).fill('1:*').join(',');
    const answers = await besideInnocent('SEARCH 9,999 ranges x 8', srv.port, async () => {
      const cmds = [];
      for (let i = 0; i < 4; i++) cmds.push(`SEARCH ${set}`, `UID SEARCH UID ${set} NOT DELETED`);
      a.write(cmds.map((c, i) => `q${i} ${c}\r\n`).join(''));
      const out = [];
      for (let i = 0; i < cmds.length; i++) {
        out.push(await a.waitFor(new RegExp(`^q${i} (OK|NO|BAD)[^\\r\\n]*\\r\\n`, 'm'), 120000));
      }
      return out;
    });
    const all = Array.from({ length: 20000 }, (_, i) => i + 1).join(' ');
    for (const text of answers) expect(text).toContain(`* SEARCH ${all}\r\n`);
    expect(await a.cmd('s1', `SEARCH 2,19999:*,5:3`)).toMatch(/^\* SEARCH 2 3 4 5 19999 20000\r$/m);
    a.close();
  }, 240000);
});

describe('before login: literals, bytes, connections per address, deadline (items 2, 3)', () => {
  let srv;
  const limits = {
    maxConnectionsPerAddress: 5,
    maxPreauthConnections: 12,
    maxConnections: 30,
    preauthTimeout: 1500,
  };
  beforeAll(async () => {
    srv = await startServer(limits);
  });
  afterAll(() => srv.server.close());

  const closed = (c) =>
    new Promise((resolve) => (c.closed ? resolve() : c.socket.once('close', resolve)));

  test('a synchronizing literal over the pre-login limit is refused without a continuation', async () => {
    await besideInnocent('pre-login literals', srv.port, async () => {
      const c = await RawClient.connect(srv.port);
      c.write('l1 LOGIN {100000}\r\n');
      const text = await c.waitFor(/^l1 (OK|NO|BAD)[^\r\n]*\r\n/m);
      expect(text).toMatch(/^l1 BAD \[TOOBIG\]/m);
      expect(text).not.toMatch(/^\+/m);
      // The session goes on; a literal within the limit is read (LOGIN with a literal password).
      c.write('l2 LOGIN alice {11}\r\n');
      await c.waitFor(/^\+ [^\r\n]*\r\n/m);
      c.write('attacker pw\r\n');
      expect(await c.waitFor(/^l2 (OK|NO|BAD)[^\r\n]*\r\n/m)).toMatch(/^l2 OK/m);
      c.close();
    });
  });

  test('a non-synchronizing literal over the pre-login limit closes the connection', async () => {
    await besideInnocent('pre-login LITERAL+', srv.port, async () => {
      const c = await RawClient.connect(srv.port);
      c.write('l1 LOGIN {100000+}\r\n');
      expect(await c.waitFor(/^\* BYE [^\r\n]*\r\n/m)).toMatch(/\* BYE Literal too large/);
      await closed(c);
    });
  });

  test('the bytes a connection may send before login are bounded', async () => {
    await besideInnocent('pre-login bytes', srv.port, async () => {
      const c = await RawClient.connect(srv.port);
      const noops = Array.from({ length: 12000 }, (_, i) => `n${i} NOOP\r\n`).join('');
      c.write(noops);
      expect(await c.waitFor(/^\* BYE [^\r\n]*\r\n/m, 60000)).toMatch(/before authentication/);
      await closed(c);
    });
  });

  test('connections from one address are capped; others and authenticated sessions are served', async () => {
    const loggedIn = await attacker(srv.port); // an authenticated session from the same address
    const flood = [];
    await besideInnocent('pre-login flood from one address', srv.port, async () => {
      for (let i = 0; i < limits.maxConnectionsPerAddress; i++) {
        flood.push(await RawClient.connect(srv.port));
      }
      const refused = await RawClient.connect(srv.port, '127.0.0.1', {
        greeting: /^\* BYE .*\r\n/m,
      });
      await closed(refused);
      // Another address still gets in and logs in.
      const other = await RawClient.connect(srv.port, '127.0.0.1', { localAddress: '127.0.0.3' });
      expect(await other.cmd('o1', 'LOGIN alice "attacker pw"')).toMatch(/^o1 OK/m);
      other.close();
      expect(await loggedIn.cmd('a1', 'NOOP')).toMatch(/^a1 OK/m);
      // A slot of the address comes back once one of its connections logs in.
      expect(await flood[0].cmd('f1', 'LOGIN alice "attacker pw"')).toMatch(/^f1 OK/m);
      const next = await RawClient.connect(srv.port);
      expect(await next.cmd('x1', 'CAPABILITY')).toMatch(/^x1 OK/m);
      flood.push(next);
    });
    for (const c of flood) c.close();
    loggedIn.close();
  });

  test('refused connections that reset at once or never read neither crash the server nor linger', async () => {
    const net = require('node:net');
    const flood = [];
    const silent = [];
    const connections = () =>
      new Promise((resolve) => srv.server.servers[0].getConnections((e, n) => resolve(n)));
    await besideInnocent('refused connections reset or left unread', srv.port, async () => {
      for (let i = 0; i < limits.maxConnectionsPerAddress; i++) {
        flood.push(await RawClient.connect(srv.port));
      }
      // Each further connection is refused. Half the clients reset it as soon as it is open;
      // the others write a command and then neither read nor close.
      await Promise.all(
        Array.from(
          { length: 40 },
          (_, i) =>
            new Promise((resolve) => {
              const sock = net.connect(srv.port, '127.0.0.1');
              sock.on('error', () => {});
              sock.on('connect', () => {
                if (i % 2) {
                  sock.resetAndDestroy();
                } else {
                  sock.write('a LOGIN x y\r\n');
                  sock.pause();
                  silent.push(sock);
                }
                resolve();
              });
            }),
        ),
      );
    });
    // The server lets go of every refused connection (waited for at most 30 s).
    for (let i = 0; i < 600 && (await connections()) > flood.length; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await connections()).toBeLessThanOrEqual(flood.length);
    for (const c of [...flood, ...silent]) c.destroy ? c.destroy() : c.close();
  });

  test('the login deadline is total: a client trickling bytes is logged out', async () => {
    await besideInnocent('trickling pre-login client', srv.port, async () => {
      const c = await RawClient.connect(srv.port);
      // A byte every 100 ms, a whole NOOP now and then: each used to restart the timer.
      const timer = setInterval(() => c.write('t NOOP'.slice(0, 1)), 100);
      const noop = setInterval(() => c.write('\r\nt NOOP\r\n'), 400);
      try {
        expect(await c.waitFor(/^\* BYE [^\r\n]*\r\n/m, 30000)).toMatch(/Autologout/);
      } finally {
        clearInterval(timer);
        clearInterval(noop);
      }
      await closed(c);
    });
  });

  test('pre-login slots are bounded by the oldest giving way: logins still get through', async () => {
    await besideInnocent('pre-login flood from many addresses', srv.port, async () => {
      const conns = [];
      for (let i = 0; i < limits.maxPreauthConnections; i++) {
        conns.push(
          await RawClient.connect(srv.port, '127.0.0.1', { localAddress: `127.0.1.${i + 1}` }),
        );
      }
      const late = await RawClient.connect(srv.port, '127.0.0.1', { localAddress: '127.0.2.1' });
      expect(await late.cmd('z1', 'LOGIN alice "attacker pw"')).toMatch(/^z1 OK/m);
      await closed(conns[0]); // the oldest gave way
      expect(conns[0].buf.toString('latin1')).toMatch(/\* BYE Connection queue full/);
      for (const c of [...conns, late]) c.close();
    });
  });
});

describe('a client that does not read its IDLE updates (item 7)', () => {
  let srv;
  const limits = { maxUnsentBytes: 64 * 1024, outputStallTimeout: 1500 };
  // Long keywords make each update line ~600 bytes: 25 rounds on 2,000 messages are ~30 MB,
  // more than loopback's socket buffers hold, so unread updates pile up in the process.
  const keywords = Array.from({ length: 12 }, (_, i) => `kw${i}_${'x'.repeat(40)}`).join(' ');
  beforeAll(async () => {
    srv = await startServer(limits, async (service) => {
      const be = await service.openBackend('memory', 'alice');
      for (let i = 1; i <= 2000; i++) {
        await be.append('INBOX', Buffer.from(`Subject: m${i}\r\n\r\nx\r\n`));
      }
    });
  });
  afterAll(() => srv.server.close());

  test('unsent updates stay bounded and the non-reading session is disconnected', async () => {
    const idler = await attacker(srv.port);
    expect(await idler.cmd('d1', 'SELECT INBOX')).toMatch(/^d1 OK/m);
    idler.write('d2 IDLE\r\n');
    await idler.waitFor(/^\+ [^\r\n]*\r\n/m);
    idler.socket.pause(); // reads nothing from here on
    const session = [...srv.server.sessions].find((s) => s.user === 'alice');
    const changer = await attacker(srv.port);
    expect(await changer.cmd('c0', 'SELECT INBOX')).toMatch(/^c0 OK/m);
    let maxUnsent = 0;
    let rounds = 0;
    await besideInnocent('non-reading IDLE client', srv.port, async () => {
      for (; rounds < 25 && !session.closed; rounds++) {
        const op = rounds % 2 ? '-FLAGS.SILENT' : '+FLAGS.SILENT';
        expect(await changer.cmd(`c${rounds + 1}`, `STORE 1:* ${op} (${keywords})`)).toMatch(
          /^c\d+ OK/m,
        );
        // Let the idler's poll (every 50 ms) turn the change into updates.
        await new Promise((r) => setTimeout(r, 150));
        maxUnsent = Math.max(maxUnsent, session.socket.writableLength);
      }
      // Disconnected after outputStallTimeout; waited for at most 40 times that.
      for (let i = 0; i < 1200 && !session.closed; i++) await new Promise((r) => setTimeout(r, 50));
    });
    console.log(
      `[imap abuse] non-reading IDLE client: at most ${maxUnsent} bytes unsent ` +
        `(bound ${limits.maxUnsentBytes}); ${session.closed ? 'disconnected' : 'still connected'} after ${rounds} flag rounds`,
    );
    // One update line may go past the bound (it is checked before each line).
    expect(maxUnsent).toBeLessThanOrEqual(limits.maxUnsentBytes + 4096);
    expect(session.closed).toBe(true);
    expect(srv.server.sessions.has(session)).toBe(false);
    expect(await changer.cmd('c99', 'NOOP')).toMatch(/^c99 OK/m);
    changer.close();
    idler.close();
  }, 120000);
});

test('the per-address limit counts IPv4 addresses, and IPv6 ones by their /64', () => {
  const { addressKey } = require('../lib/server');
  expect(addressKey('192.0.2.7')).toBe('192.0.2.7');
  expect(addressKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
  expect(addressKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
  expect(addressKey('2001:db8:1:2:bbbb:cccc:dddd:eeee')).toBe('2001:db8:1:2::/64');
  expect(addressKey('2001:db8::5')).toBe('2001:db8:0:0::/64');
  expect(addressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
  expect(addressKey('::1')).toBe('0:0:0:0::/64');
});
