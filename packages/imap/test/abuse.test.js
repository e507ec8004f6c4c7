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
