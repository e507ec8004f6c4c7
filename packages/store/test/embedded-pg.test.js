'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { runCli } = require('@mailgate/test-support/db');

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
    const { loadConfig } = require('@mailgate/core');
    const { openDatabase } = require('@mailgate/store');
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

test('the demo on the embedded server says to start it once: each later command then reuses it', () => {
  // Issue 30.15: every command after the quick start paid 2-5 s to start and stop the server.
  expect(status().running).toBe(false);
  const demo = cli(['demo', '--no-serve', '--user', 'quick']);
  expect(demo.code).toBe(0);
  const tries = demo.stdout.slice(demo.stdout.indexOf('Try:')).split('\n').slice(1);
  expect(tries[0]).toMatch(/^ {2}npx mailgate db start\b/);
  // Started on demand, the server went with the demo; after `db start` it stays for commands.
  expect(status().running).toBe(false);
  expect(cli(['db', 'start']).code).toBe(0);
  const pid = status().pid;
  expect(cli(['ls', '--user', 'quick', '--json']).code).toBe(0);
  expect(status()).toMatchObject({ running: true, pid, persistent: true });
});

test('the embedded server bounds its WAL (issue 30.6: pg_wal reached 2.1 GB)', async () => {
  expect(status().running).toBe(true); // started for good by the test above
  const pg = require('pg');
  const { EmbeddedPostgres } = require('@mailgate/store');
  const client = new pg.Client({ connectionString: new EmbeddedPostgres(home).url() });
  await client.connect();
  try {
    const show = async (name) => (await client.query(`SHOW ${name}`)).rows[0][name];
    expect(await show('max_wal_size')).toBe('512MB');
    expect(await show('min_wal_size')).toBe('64MB');
    expect(await show('wal_compression')).not.toBe('off');
    // Bitmap heap scans prefetch (issue 35.1: a cold text search read its pages one by one).
    expect(await show('effective_io_concurrency')).toBe('64');
  } finally {
    await client.end();
  }
});

test('mailgate processes reach the embedded server through its unix socket (issue 32)', async () => {
  expect(status().running).toBe(true); // started for good by the demo test
  const pg = require('pg');
  const { EmbeddedPostgres, socketDirOf } = require('@mailgate/store');
  const url = new EmbeddedPostgres(home).url();
  // The socket's directory in MAILGATE_HOME, not TCP on loopback.
  expect(decodeURIComponent(new URL(url).hostname)).toBe(path.join(home, 'run'));
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // A unix socket connection has no server address.
    expect((await client.query('SELECT inet_server_addr() AS a')).rows[0].a).toBeNull();
  } finally {
    await client.end();
  }
  // TCP on loopback still answers (psql -h 127.0.0.1, tools that take a host and port).
  const tcp = new URL(url);
  tcp.hostname = '127.0.0.1';
  const viaTcp = new pg.Client({ connectionString: tcp.toString() });
  await viaTcp.connect();
  try {
    expect((await viaTcp.query('SELECT inet_server_addr() AS a')).rows[0].a).toBe('127.0.0.1');
  } finally {
    await viaTcp.end();
  }
  // A home whose socket path would not fit sun_path (107 bytes), or that a shell would read
  // otherwise, gets no socket: TCP only.
  expect(socketDirOf('/' + 'h'.repeat(100), 5432)).toBeNull();
  expect(socketDirOf("/tmp/it's", 5432)).toBeNull();
  expect(socketDirOf('/tmp/mg', 5432)).toBe('/tmp/mg/run');
  expect(cli(['db', 'stop']).code).toBe(0);
});
