'use strict';

const net = require('node:net');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { useCliSuite, CLI } = require('@mailgate/test-support/db');

// The README's main job: `mailgate demo` on real mail (SpamAssassin corpus from npm).
const suite = useCliSuite('demo');
const cli = (args) => suite.cli(args, { env: { MAILGATE_HOME: path.join(suite.tmp, 'home') } });

test('demo imports the SpamAssassin sample, shows it, and is idempotent', () => {
  const first = cli(['demo', '--user', 'demo1']);
  expect(first.code).toBe(0);
  expect(first.stdout).toMatch(/INBOX\s+2500 messages/);
  expect(first.stdout).toMatch(/spam\s+500 messages/);
  expect(first.stdout).toMatch(/Imported 3000 new messages/);
  // Without a terminal the demo does not serve, but says how to reach the page.
  expect(first.stdout).toMatch(/webmail page[^\n]*http:\/\/127\.0\.0\.1:\d+\//);
  const hits = /Search "linux" in INBOX: (\d+) of 2500/.exec(first.stdout);
  expect(Number(hits[1])).toBeGreaterThan(0);
  // The printed commands work as printed.
  const ls = cli([
    'ls',
    '--user',
    'demo1',
    '--mailbox',
    'INBOX',
    '--limit',
    '3',
    '--order',
    'uid',
    '--json',
  ]);
  expect(ls.json.messages).toHaveLength(3);

  const again = cli(['demo', '--user', 'demo1']);
  expect(again.code).toBe(0);
  expect(again.stdout).toMatch(/Everything was already imported/);
  const v = cli([
    'verify',
    'mbox',
    path.join(suite.tmp, 'home', 'demo', 'inbox.mbox'),
    '--user',
    'demo1',
    '--mailbox',
    'INBOX',
    '--json',
  ]);
  expect(v.json).toMatchObject({ ok: true, present: 2500 });
});

test('demo on a terminal with its port in use: PORT_IN_USE naming the port, no stack trace', async () => {
  // The demo serves only when stdout is a terminal: script(1) gives it one.
  const blocker = net.createServer();
  await new Promise((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const { port } = blocker.address();
  try {
    const r = spawnSync(
      'script',
      ['-qec', `${process.execPath} ${CLI} demo --user demo1`, '/dev/null'],
      {
        encoding: 'utf8',
        env: {
          ...process.env,
          DATABASE_URL: suite.db.url,
          MAILGATE_HOME: path.join(suite.tmp, 'home'),
          LOG_LEVEL: 'error',
          PORT: String(port),
          HOST: '127.0.0.1',
        },
        timeout: 120000,
      },
    );
    expect(r.stdout).toMatch(/Everything was already imported/);
    expect(r.stdout).toMatch(new RegExp(`PORT_IN_USE: Port ${port} on 127.0.0.1 `));
    expect(r.stdout).not.toMatch(/^\s+at .+:\d+:\d+\)?\r?$/m);
    expect(r.status).toBe(1);
  } finally {
    await new Promise((resolve) => blocker.close(resolve));
  }
});
