'use strict';

const { createTestDatabase, runCli } = require('@mailgate/test-support/db');

let db;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());

test('bad usage exits 2 with a message', () => {
  const r = runCli(['import', 'mbox', '/nonexistent.mbox'], { url: db.url });
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/--user/);
  expect(runCli(['frobnicate'], { url: db.url }).code).toBe(2);
  expect(
    runCli(
      ['export', 'mbox', '--user', 'x', '--mailbox', 'y', '--out', '/tmp/x', '--variant', 'nope'],
      { url: db.url },
    ).code,
  ).toBe(2);
});

test('a missing source file is a failure naming the file', () => {
  const r = runCli(['import', 'mbox', '/nonexistent/box.mbox', '--user', 'u1', '--json'], {
    url: db.url,
  });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('/nonexistent/box.mbox');
  expect(r.stderr).toContain('SOURCE_NOT_FOUND');
});

test('unknown user and mailbox are clear failures', () => {
  expect(runCli(['ls', '--user', 'nobody'], { url: db.url }).stderr).toMatch(
    /No such user: nobody/,
  );
  runCli(['user', 'add', 'carol'], { url: db.url });
  const r = runCli(['ls', '--user', 'carol', '--mailbox', 'Nope'], { url: db.url });
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/No such mailbox: Nope/);
});

test('--help explains commands', () => {
  const r = runCli(['import', 'mbox', '--help'], { url: db.url });
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/--mailbox/);
  expect(r.stdout).toMatch(/--variant/);
});
