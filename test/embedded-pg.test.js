'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { runCli } = require('./support/db');

// These tests manage their own embedded server in a scratch MAILGATE_HOME, apart from the
// suite's database, to check the start-on-demand and sharing contract of the brief.
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'mailgate-emb-'));
const env = { MAILGATE_HOME: home };
const cli = (args) => runCli(args, { url: '', env });
const status = () => cli(['db', 'status', '--json']).json;

afterAll(() => {
  cli(['db', 'stop']);
  fs.rmSync(home, { recursive: true, force: true });
});

test('db start keeps the server running across commands until db stop', () => {
  const started = cli(['db', 'start', '--json']);
  expect(started.code).toBe(0);
  expect(started.json).toMatchObject({ running: true, persistent: true });
  const pid = started.json.pid;

  expect(cli(['user', 'add', 'alice', '--json']).json).toMatchObject({ name: 'alice' });
  // The second process connected to the same server instead of starting another one.
  expect(status()).toMatchObject({ running: true, pid });

  expect(cli(['db', 'stop']).code).toBe(0);
  expect(status().running).toBe(false);
});

test('a server started on demand stops when its last user ends, not before', async () => {
  expect(status().running).toBe(false);
  const r = cli(['user', 'add', 'bob', '--json']);
  expect(r.code).toBe(0);
  expect(status().running).toBe(false);

  // A long-lived client holds the server; a short command in between must not stop it.
  const holderScript = `
    const { loadConfig, openDatabase } = require('@mailgate/core');
    (async () => {
      const db = await openDatabase(loadConfig());
      process.stdout.write('ready\\n');
      process.stdin.once('data', async () => { await db.close(); process.exit(0); });
    })();`;
  const holder = spawn(process.execPath, ['-e', holderScript], {
    env: { ...process.env, ...env, DATABASE_URL: '' },
    cwd: path.resolve(__dirname, '..'),
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  await new Promise((resolve) => holder.stdout.once('data', resolve));
  const pid = status().pid;
  expect(pid).toBeGreaterThan(0);

  const ls = cli(['ls', '--user', 'alice', '--json']);
  expect(ls.code).toBe(0);
  expect(ls.json.mailboxes).toEqual([]);
  expect(status()).toMatchObject({ running: true, pid, persistent: false });

  holder.stdin.write('go\n');
  await new Promise((resolve) => holder.once('exit', resolve));
  expect(status().running).toBe(false);
});
