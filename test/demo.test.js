'use strict';

const path = require('node:path');
const { useCliSuite } = require('./support/db');

// The README's main job: `mailgate demo` on real mail (SpamAssassin corpus from npm).
const suite = useCliSuite('demo');
const cli = (args) => suite.cli(args, { env: { MAILGATE_HOME: path.join(suite.tmp, 'home') } });

test('demo imports the SpamAssassin sample, shows it, and is idempotent', () => {
  const first = cli(['demo', '--user', 'demo1']);
  expect(first.code).toBe(0);
  expect(first.stdout).toMatch(/INBOX\s+2500 messages/);
  expect(first.stdout).toMatch(/spam\s+500 messages/);
  expect(first.stdout).toMatch(/Imported 3000 new messages/);
  const hits = /Search "linux" in INBOX: (\d+) of 2500/.exec(first.stdout);
  expect(Number(hits[1])).toBeGreaterThan(0);
  // The printed commands work as printed.
  const ls = cli(['ls', '--user', 'demo1', '--mailbox', 'INBOX', '--limit', '3', '--json']);
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
