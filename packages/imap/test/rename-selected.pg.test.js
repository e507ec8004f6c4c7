'use strict';

// RENAME of the mailbox a session has selected (issue 29 item 8): OK, and the session goes on
// with the same messages under the new name (RFC 3501 6.3.5 keeps UIDVALIDITY and UIDs).
const { startPgServer } = require('./helpers');
const { RawClient } = require('./raw-client');

let env;

beforeAll(async () => {
  env = await startPgServer({ users: { alice: 'alice pw' } });
  const be = await env.service.openBackend('pg', 'alice');
  await be.createMailbox('Box');
  await be.createMailbox('Parent');
  await be.createMailbox('Parent/Child');
  for (const [box, n] of [
    ['Box', 2],
    ['Parent/Child', 1],
  ]) {
    for (let i = 1; i <= n; i++) {
      await be.append(box, Buffer.from(`Subject: ${box} ${i}\r\n\r\nbody\r\n`), {});
    }
  }
  await be.close();
});

afterAll(() => env.close());

test('the selected mailbox renamed by its own session stays selected under its new name', async () => {
  const c = await RawClient.connect(env.port);
  expect(await c.cmd('a', 'LOGIN alice "alice pw"')).toMatch(/^a OK/m);
  const sel = await c.cmd('b', 'SELECT Box');
  const validity = /UIDVALIDITY (\d+)/.exec(sel)[1];
  expect(await c.cmd('c', 'RENAME Box Renamed')).toMatch(/^c OK/m);
  expect(await c.cmd('d', 'UID FETCH 1:* (FLAGS)')).toMatch(/^\* 2 FETCH[^\r]*\r\nd OK/m);
  expect(await c.cmd('e', 'STORE 1 +FLAGS (\\Flagged)')).toMatch(/^e OK/m);
  const st = await c.cmd('f', 'STATUS Renamed (MESSAGES UIDVALIDITY)');
  expect(st).toMatch(new RegExp(`MESSAGES 2 UIDVALIDITY ${validity}`));
  expect(await c.cmd('g', 'LIST "" "Box"')).not.toMatch(/^\* LIST/m);
  // A parent of the selected mailbox: the selected one is renamed with it.
  expect(await c.cmd('h', 'SELECT Parent/Child')).toMatch(/^h OK/m);
  expect(await c.cmd('i', 'RENAME Parent Moved')).toMatch(/^i OK/m);
  expect(await c.cmd('j', 'FETCH 1 (BODY.PEEK[HEADER.FIELDS (SUBJECT)])')).toMatch(
    /Subject: Parent\/Child 1[\s\S]*^j OK/m,
  );
  expect(await c.cmd('k', 'NOOP')).toMatch(/^k OK/m);
  expect(c.closed).toBe(false);
  c.close();
});
