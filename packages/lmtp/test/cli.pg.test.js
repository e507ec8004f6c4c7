'use strict';

const { spawnSync } = require('node:child_process');
const { createTestDatabase, spawnCli, stderrMatch, CLI } = require('@mailgate/test-support/db');
const { createMailService } = require('@mailgate/service');
const { RawLmtp } = require('./client');
const { stored } = require('./helpers');

/*
 * `mailgate deliver` (sysexits codes, never 0 before the commit) and `mailgate lmtp` /
 * `mailgate serve` with LMTP_PORT as processes.
 */

let db;
let service;
beforeAll(async () => {
  db = await createTestDatabase();
  service = await createMailService({ knex: db.knex, env: { LOG_LEVEL: 'silent' } });
  for (const u of ['dora', 'pia']) await service.users.create(u, {});
  const be = await service.openBackend('pg', 'dora');
  await be.createMailbox('Archive');
  await service.users.setRoute('pia', 'proxy');
});
afterAll(async () => {
  await service.close();
  await db.drop();
});

/** Runs `mailgate deliver …` with the message on stdin. */
function deliver(args, input, env = {}) {
  const r = spawnSync(process.execPath, [CLI, 'deliver', ...args], {
    input,
    env: { ...process.env, DATABASE_URL: db.url, LOG_LEVEL: 'error', ...env },
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const MSG = 'From: x@example.org\nSubject: via deliver\n\nbody\n';

test('stored: exit 0, bytes with Return-Path and Delivered-To in the message line ending', async () => {
  const r = deliver(['-a', 'dora@example.com', '-f', 'x@example.org', '--json'], MSG);
  expect(r).toMatchObject({ code: 0 });
  expect(JSON.parse(r.stdout)).toMatchObject({ user: 'dora', mailbox: 'INBOX', uid: 1 });
  expect(await stored(service, 'dora', 'INBOX')).toEqual([
    'Return-Path: <x@example.org>\nDelivered-To: dora@example.com\n' + MSG,
  ]);
});

test('-m into an existing mailbox; a leading From_ line is dropped and gives the sender', async () => {
  const r = deliver(
    ['-a', 'dora@example.com', '-m', 'Archive'],
    'From bounce@example.net Fri Nov 27 10:00:00 2026\n' + MSG,
  );
  expect(r.code).toBe(0);
  expect(await stored(service, 'dora', 'Archive')).toEqual([
    'Return-Path: <bounce@example.net>\nDelivered-To: dora@example.com\n' + MSG,
  ]);
  // A mailbox that does not exist: INBOX (as dovecot-lda without autocreate).
  expect(deliver(['-a', 'dora@example.com', '-m', 'Nope'], MSG).code).toBe(0);
  expect(await stored(service, 'dora', 'INBOX')).toHaveLength(2);
});

test('unknown user exits 67 EX_NOUSER with a coded message', () => {
  const r = deliver(['-a', 'nobody@example.com'], MSG);
  expect(r.code).toBe(67);
  expect(r.stderr).toMatch(/^USER_NOT_FOUND: No such user: nobody@example.com$/m);
});

test('a proxied user exits 75 EX_TEMPFAIL until the cutover; nothing stored', async () => {
  const r = deliver(['-a', 'pia@example.com'], MSG);
  expect(r.code).toBe(75);
  expect(r.stderr).toMatch(/^MAILBOX_MIGRATING: /m);
  expect(await stored(service, 'pia', 'INBOX')).toEqual([]);
});

test('over LMTP_MAX_MESSAGE_BYTES or empty exits 65 EX_DATAERR', () => {
  expect(deliver(['-a', 'dora@example.com'], MSG, { LMTP_MAX_MESSAGE_BYTES: '10' }).code).toBe(65);
  expect(deliver(['-a', 'dora@example.com'], '').code).toBe(65);
});

test('database unreachable exits 75 EX_TEMPFAIL, not a bounce', () => {
  const u = new URL(db.url);
  u.port = '1'; // nothing listens there
  const r = deliver(['-a', 'dora@example.com'], MSG, { DATABASE_URL: u.toString() });
  expect(r.code).toBe(75);
  expect(r.stderr).toMatch(/^[A-Z_]+: /m);
});

test('the address table (MAILGATE_ADDRESS_MAP) comes before the local part; a broken one defers', async () => {
  const fs = require('node:fs');
  const os = require('node:os');
  const path = require('node:path');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-addrmap-'));
  const map = path.join(dir, 'map.json');
  fs.writeFileSync(
    map,
    JSON.stringify({ 'postmaster@example.com': 'dora', 'pia@example.com': 'dora' }),
  );
  try {
    const before = (await stored(service, 'dora', 'INBOX')).length;
    const env = { MAILGATE_ADDRESS_MAP: map };
    // Any case of a listed address; a listed address wins over a user of that local part.
    expect(deliver(['-a', 'PostMaster@Example.COM'], MSG, env).code).toBe(0);
    expect(deliver(['-a', 'pia@example.com'], MSG, env).code).toBe(0);
    expect(await stored(service, 'dora', 'INBOX')).toHaveLength(before + 2);
    expect(deliver(['-a', 'postmaster@example.com'], MSG).code).toBe(67); // without the table
    fs.writeFileSync(map, '{not json');
    const r = deliver(['-a', 'dora@example.com'], MSG, env);
    expect(r.code).toBe(75);
    expect(r.stderr).toMatch(/^CONFIG_INVALID: .*MAILGATE_ADDRESS_MAP/m);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('missing -a is a usage error (exit 2)', () => {
  expect(deliver([], MSG).code).toBe(2);
});

test.each([['lmtp'], ['serve']])(
  'mailgate %s with LMTP_PORT: delivers, exits 0 on SIGTERM',
  async (cmd) => {
    const child = spawnCli([cmd], {
      url: db.url,
      env: { LMTP_PORT: '0', LMTP_HOST: '127.0.0.1', IMAP_PORT: '0', PORT: '0', HOST: '127.0.0.1' },
    });
    const m = await stderrMatch(child, /LMTP listening on lmtp:\/\/[^:]+:(\d+)/);
    const c = await RawLmtp.connect({ port: Number(m[1]) });
    expect((await c.reply()).code).toBe(220);
    c.write('LHLO t\r\nMAIL FROM:<>\r\nRCPT TO:<dora@example.com>\r\nDATA\r\n');
    expect((await c.replies(4)).map((x) => x.code)).toEqual([250, 250, 250, 354]);
    const before = (await stored(service, 'dora', 'INBOX')).length;
    c.write(`Subject: ${cmd}\r\n\r\nx\r\n.\r\n`);
    expect((await c.reply()).code).toBe(250);
    expect(await stored(service, 'dora', 'INBOX')).toHaveLength(before + 1);
    const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect((await c.reply()).text).toMatch(/^421 4\.3\.2 /);
    expect(await exited).toBe(0);
    c.end();
  },
);
