'use strict';

const { startPgServer } = require('./helpers');
const { RawClient } = require('./raw-client');

/*
 * IMAP and accounts (issue 30.7, 29.7, 29.6): a user without a password is answered
 * NO [AUTHENTICATIONFAILED] with the one step to take; a password change closes the user's
 * open sessions (the new password then logs in); CREATE, RENAME and APPEND refuse mailbox names
 * with `.`/`..` segments or control characters with the one coded error (NO [CANNOT]).
 */

let env;
const PW = { alice: 'alice pw 1', bob: 'bob pw 2' };

beforeAll(async () => {
  env = await startPgServer({ users: PW });
  await env.service.users.ensure('imported'); // as an import makes them: no password
});
afterAll(() => env.close());

test('a user without a password: NO [AUTHENTICATIONFAILED] naming mailgate user passwd', async () => {
  const c = await RawClient.connect(env.port);
  expect(await c.cmd('a', 'LOGIN imported "any password"')).toMatch(
    /^a NO \[AUTHENTICATIONFAILED\] user has no password: set one with mailgate user passwd imported\r\n/m,
  );
  // unknown users and wrong passwords stay one generic answer
  expect(await c.cmd('b', 'LOGIN nobody "any password"')).toMatch(
    /^b NO \[AUTHENTICATIONFAILED\] Authentication failed\r\n/m,
  );
  expect(await c.cmd('c', 'LOGIN alice "wrong password"')).toMatch(
    /^c NO \[AUTHENTICATIONFAILED\] Authentication failed\r\n/m,
  );
  c.close();
});

test('a password change closes the open sessions of that user only', async () => {
  const a = await RawClient.connect(env.port);
  expect(await a.cmd('a', `LOGIN alice "${PW.alice}"`)).toMatch(/^a OK/m);
  expect(await a.cmd('b', 'SELECT INBOX')).toMatch(/^b OK/m);
  const b = await RawClient.connect(env.port);
  expect(await b.cmd('a', `LOGIN bob "${PW.bob}"`)).toMatch(/^a OK/m);
  await env.service.users.setPassword('alice', 'a new password 9');
  // closed by the server (the check runs every IMAP_IDLE_POLL_MS; here 100 ms)
  await a.waitFor(/^\* BYE Credentials changed; log in again\r\n/m, 20000);
  await new Promise((resolve) => (a.closed ? resolve() : a.socket.once('close', resolve)));
  expect(a.closed).toBe(true);
  // bob's session is untouched
  expect(await b.cmd('n', 'NOOP')).toMatch(/^n OK/m);
  expect(b.closed).toBe(false);
  b.close();
  const again = await RawClient.connect(env.port);
  expect(await again.cmd('a', `LOGIN alice "${PW.alice}"`)).toMatch(/^a NO/m);
  expect(await again.cmd('b', 'LOGIN alice "a new password 9"')).toMatch(/^b OK/m);
  again.close();
});

test('CREATE, RENAME and APPEND refuse "." and ".." segments and control characters', async () => {
  const c = await RawClient.connect(env.port);
  expect(await c.cmd('a', `LOGIN bob "${PW.bob}"`)).toMatch(/^a OK/m);
  let n = 0;
  for (const name of ['..', '"../alice"', '"x/../../y"', '.', '"a/./b"']) {
    const tag = `c${n++}`;
    expect(await c.cmd(tag, `CREATE ${name}`)).toMatch(
      new RegExp(`^${tag} NO \\[CANNOT\\] Invalid mailbox name`, 'm'),
    );
  }
  expect(await c.cmd('d', 'CREATE Fine')).toMatch(/^d OK/m);
  expect(await c.cmd('e', 'RENAME Fine "../../escape"')).toMatch(/^e NO \[CANNOT\] Invalid/m);
  const body = 'Subject: x\r\n\r\nhi\r\n';
  expect(await c.cmd('f', `APPEND "../Fine" {${body.length}+}\r\n${body}`)).toMatch(
    /^f NO \[CANNOT\] Invalid mailbox name/m,
  );
  const list = await c.cmd('g', 'LIST "" "*"');
  expect(list).toMatch(/"?Fine"?\r\n/);
  expect(list).not.toMatch(/escape|\.\./);
  c.close();
});
