'use strict';

const { createTestDatabase, runCli, spawnCli, stderrMatch } = require('@mailgate/test-support/db');
const { RawClient } = require('./raw-client');

// `mailgate imap` and `mailgate serve` as processes: they listen, log users in through the
// service, and say `* BYE` to open sessions on SIGTERM before exiting 0.
let db;
beforeAll(async () => {
  db = await createTestDatabase();
  const r = runCli(['user', 'add', 'ivy', '--password-env', 'IVY_PW'], {
    url: db.url,
    env: { IVY_PW: 'ivy secret' },
  });
  expect(r.code).toBe(0);
});
afterAll(() => db.drop());

test.each([
  ['imap', []],
  ['serve', ['PORT']],
])('mailgate %s: LOGIN, SELECT INBOX, BYE on SIGTERM, exit 0', async (cmd) => {
  const child = spawnCli([cmd], {
    url: db.url,
    env: { IMAP_PORT: '0', IMAP_HOST: '127.0.0.1', PORT: '0', HOST: '127.0.0.1' },
  });
  const m = await stderrMatch(child, /IMAP listening on imap:\/\/[^:]+:(\d+)/);
  const c = await RawClient.connect(Number(m[1]));
  expect(await c.cmd('a', 'LOGIN ivy "ivy secret"')).toMatch(/^a OK/m);
  expect(await c.cmd('b', 'SELECT INBOX')).toMatch(/^\* 0 EXISTS\r\n[\s\S]*^b OK \[READ-WRITE\]/m);
  const bye = c.waitFor(/^\* BYE [^\r]*\r\n/m);
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  expect(await bye).toMatch(/shutting down/);
  expect(await exited).toBe(0);
  c.close();
});

test('IMAP_TLS_CERT without IMAP_TLS_KEY is CONFIG_INVALID', () => {
  const r = runCli(['imap'], {
    url: db.url,
    env: { IMAP_PORT: '0', IMAP_TLS_CERT: '/nonexistent' },
  });
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/^CONFIG_INVALID: .*IMAP_TLS_CERT and IMAP_TLS_KEY/m);
});
