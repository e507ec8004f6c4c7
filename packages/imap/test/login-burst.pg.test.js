'use strict';

/*
 * Issue 35 item 4: a mail client opens several connections at once, each with the right
 * password. The failed-login limiter must never refuse a correct login: 20 simultaneous
 * LOGINs of one user from one address all get OK (Dovecot accepts all 20; mailgate answered
 * 10 of them `NO [UNAVAILABLE] Too many failed logins`).
 */

const { startPgServer } = require('./helpers');
const { RawClient } = require('./raw-client');

let t;
beforeAll(async () => {
  t = await startPgServer({ users: { alice: 'alice pw' } });
});
afterAll(() => t.close());

test('20 connections of one user at once with the right password: 20 OKs', async () => {
  const clients = await Promise.all(Array.from({ length: 20 }, () => RawClient.connect(t.port)));
  try {
    const answers = await Promise.all(clients.map((c) => c.cmd('a1', 'LOGIN alice "alice pw"')));
    const tagged = answers.map((a) => /^a1 (OK|NO|BAD)[^\r\n]*/m.exec(a)[0]);
    expect(tagged.filter((l) => l.startsWith('a1 OK'))).toHaveLength(20);
  } finally {
    for (const c of clients) c.close();
  }
});
