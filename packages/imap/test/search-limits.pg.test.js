'use strict';

/*
 * Issue 29.4: a SEARCH of 1,000 keys from one user cost the pool everyone shares. A SEARCH
 * names at most 256 keys (nested ones counted): past it NO [LIMIT] before anything runs,
 * and the session goes on. An innocent second session is served meanwhile.
 */

const { startPgServer } = require('./helpers');
const { RawClient } = require('./raw-client');

let t;
beforeAll(async () => {
  t = await startPgServer({ users: { mallory: 'm pw', innocent: 'i pw' } });
});
afterAll(() => t.close());

async function session(user, pass) {
  const c = await RawClient.connect(t.port);
  expect(await c.cmd('l', `LOGIN ${user} "${pass}"`)).toMatch(/^l OK/m);
  expect(await c.cmd('s', 'SELECT INBOX')).toMatch(/^s OK/m);
  return c;
}

test('1,000-key SEARCHes answer NO [LIMIT]; 256 keys still run; the innocent session is served', async () => {
  const m = await session('mallory', 'm pw');
  const i = await session('innocent', 'i pw');
  try {
    const flagged = Array(1000).fill('FLAGGED').join(' ');
    const nested = `(${Array(300).fill('UNSEEN').join(' ')})`;
    const ors = Array(150).fill('OR SEEN UNSEEN').join(' ');
    for (const [tag, keys] of [
      ['a', flagged],
      ['b', nested],
      ['c', ors],
    ]) {
      expect(await m.cmd(tag, `UID SEARCH ${keys}`)).toMatch(
        new RegExp(`^${tag} NO \\[LIMIT\\] SEARCH has more than 256 keys`, 'm'),
      );
    }
    expect(await m.cmd('d', `UID SEARCH ${Array(256).fill('ALL').join(' ')}`)).toMatch(/^d OK/m);
    expect(await i.cmd('e', 'UID SEARCH TEXT hello')).toMatch(/^e OK/m);
    expect(await m.cmd('f', 'NOOP')).toMatch(/^f OK/m);
  } finally {
    m.close();
    i.close();
  }
});
