'use strict';

const { UserGate, countSubstringTerms } = require('../lib/user-gate');
const { OPERATIONS } = require('../lib/backend');

/** A backend whose operations wait until released, counting how many run at once. */
function slowBackend() {
  const be = {
    running: 0,
    most: 0,
    gates: [],
    async search() {
      be.running++;
      be.most = Math.max(be.most, be.running);
      await new Promise((r) => be.gates.push(r));
      be.running--;
      return 'done';
    },
    async getMessage() {
      // A call a backend makes on itself stays inside the caller's slot.
      return this.search();
    },
    async copy(mailbox, uids) {
      return uids.length;
    },
  };
  return be;
}

const tick = () => new Promise((r) => setImmediate(r));

describe('UserGate (issue 29.4: one user never takes more than its share)', () => {
  test('at most perUser operations of a user run at once; another user is not queued behind', async () => {
    const gate = new UserGate({ perUser: 3 });
    const mine = slowBackend();
    const theirs = slowBackend();
    const a = gate.guard(mine, 'mallory');
    const b = gate.guard(theirs, 'innocent');
    const flood = Array.from({ length: 10 }, () => a.search('x'));
    await tick();
    expect(mine.running).toBe(3);
    expect(gate.load('mallory')).toEqual({ running: 3, waiting: 7 });
    const other = b.search('y');
    await tick();
    expect(theirs.running).toBe(1);
    theirs.gates.shift()();
    expect(await other).toBe('done');
    while (mine.gates.length) {
      mine.gates.shift()();
      await tick();
      await tick();
    }
    expect(await Promise.all(flood)).toEqual(Array(10).fill('done'));
    expect(mine.most).toBe(3);
    expect(gate.load('mallory')).toEqual({ running: 0, waiting: 0 });
  });

  test('calls a backend makes on itself do not take a second slot (no self-deadlock)', async () => {
    const gate = new UserGate({ perUser: 1 });
    const be = slowBackend();
    const p = gate.guard(be, 'u').getMessage('INBOX', 1);
    await tick();
    expect(be.running).toBe(1);
    be.gates.shift()();
    expect(await p).toBe('done');
  });

  test('a full queue and a long wait answer USER_BUSY (429) instead of piling up', async () => {
    const gate = new UserGate({ perUser: 1, queue: 2, waitMs: 50 });
    const be = slowBackend();
    const g = gate.guard(be, 'mallory');
    const first = g.search('a');
    const queued = [g.search('b'), g.search('c')];
    await expect(g.search('d')).rejects.toMatchObject({ code: 'USER_BUSY', statusCode: 429 });
    for (const q of queued) {
      await expect(q).rejects.toMatchObject({ code: 'USER_BUSY' });
    }
    be.gates.shift()();
    expect(await first).toBe('done');
    expect(gate.load('mallory')).toEqual({ running: 0, waiting: 0 });
  });

  test('query cost: too many substring terms and too many uids are QUERY_TOO_COMPLEX (400)', async () => {
    const gate = new UserGate({ maxSubstringTerms: 32, maxUids: 1000 });
    const g = gate.guard(slowBackend(), 'u');
    const q = Array.from({ length: 200 }, (_, i) => `text:w${i}`).join(' ');
    await expect(g.search(q)).rejects.toMatchObject({ code: 'QUERY_TOO_COMPLEX', statusCode: 400 });
    const ast = {
      type: 'or',
      children: Array.from({ length: 33 }, () => ({
        type: 'substring',
        field: 'text',
        value: 'x',
      })),
    };
    expect(countSubstringTerms(ast)).toBe(33);
    await expect(g.search(ast)).rejects.toMatchObject({ code: 'QUERY_TOO_COMPLEX' });
    await expect(
      g.copy(
        'INBOX',
        Array.from({ length: 1001 }, (_, i) => i + 1),
        'X',
      ),
    ).rejects.toMatchObject({
      code: 'QUERY_TOO_COMPLEX',
    });
    expect(await g.copy('INBOX', [1, 2, 3], 'X')).toBe(3);
  });

  test('every operation of the interface is counted, except the streams, claimRecent and append', async () => {
    const gate = new UserGate({ perUser: 1 });
    const be = {};
    const ops = [...OPERATIONS, 'scanList'];
    for (const op of ops) be[op] = async () => gate.load('u').running;
    const g = gate.guard(be, 'u');
    const counted = [];
    for (const op of ops) if ((await g[op]('INBOX', [])) === 1) counted.push(op);
    expect(ops.filter((op) => !counted.includes(op)).sort()).toEqual(
      ['append', 'claimRecent', 'scanRaw', 'scanStream'].sort(),
    );
  });
});
