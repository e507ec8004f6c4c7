'use strict';

/*
 * `mailgate search --backend …` keeps its output contract through the mail service
 * (openBackend(kind, user)): {total, uids, mailboxes:[{mailbox, uids}]}, the same answer from
 * the store and from the files themselves; a backend without the user's legacy storage is a
 * coded failure.
 */

const fs = require('node:fs');
const path = require('node:path');
const { useCliSuite } = require('@mailgate/test-support/db');
const { msg } = require('@mailgate/test-support/mail');

const suite = useCliSuite('cli-search');
const env = () => ({ MAILGATE_HOME: path.join(suite.tmp, 'home') });
const cli = (args) => suite.cli(args, { env: env() });

beforeAll(() => {
  const root = path.join(suite.tmp, 'Maildir');
  const files = {
    'cur/1000.M1.host:2,S': msg({ subject: 'gas price report', body: 'natural gas\n' }),
    'cur/1001.M2.host:2,F': msg({ subject: 'meeting', body: 'lunch at noon\n' }),
    'cur/1002.M3.host:2,': msg({ subject: 'gas meeting', body: 'price talk\n' }),
    '.Work/cur/1003.M4.host:2,S': msg({ subject: 'work gas', body: 'pipeline\n' }),
  };
  for (const [rel, buf] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), buf);
  }
  expect(cli(['import', 'maildir', root, '--user', 'sam', '--quiet']).code).toBe(0);
  expect(cli(['legacy', 'add-user', 'sam', '--maildir', root]).code).toBe(0);
});

test('pg and maildir answer with the same contract and the same uids', () => {
  for (const q of ['subject:gas', 'is:read', '-is:flagged subject:meeting', '']) {
    const pg = cli(['search', q, '--user', 'sam', '--json']);
    const md = cli(['search', q, '--user', 'sam', '--backend', 'maildir', '--json']);
    expect(pg.code).toBe(0);
    expect(md.code).toBe(0);
    expect(Object.keys(pg.json).sort()).toEqual(['mailboxes', 'total', 'uids']);
    expect(md.json).toEqual(pg.json);
    expect(pg.json.uids).toEqual(pg.json.mailboxes.flatMap((m) => m.uids));
  }
  const gas = cli(['search', 'subject:gas', '--user', 'sam', '--json']).json;
  expect(gas.total).toBe(3);
  expect(gas.mailboxes.map((m) => [m.mailbox, m.uids.length])).toEqual([
    ['INBOX', 2],
    ['Work', 1],
  ]);
  const inbox = cli(['search', 'gas', '--user', 'sam', '--mailbox', 'INBOX', '--json']).json;
  expect(inbox.mailboxes.map((m) => m.mailbox)).toEqual(['INBOX']);
  // For a person: the hits' rows, as ls shows a mailbox, on the legacy backend and on pg.
  for (const backend of ['maildir', 'pg']) {
    const human = cli(['search', 'subject:gas', '--user', 'sam', '--backend', backend]);
    const lines = human.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('3 matching messages');
    expect(lines[1]).toMatch(/^mailbox\s+uid\s+date\s+from\s+subject$/);
    // Newest first by date; these share one date, so the tie order decides (descending:
    // the later mailbox, then the higher uid).
    expect(lines.slice(2).map((l) => l.split(/\s+/)[0])).toEqual(['Work', 'INBOX', 'INBOX']);
    for (const l of lines.slice(2)) expect(l).toMatch(/gas/i);
    const one = cli([
      'search',
      'subject:gas',
      '--user',
      'sam',
      '--backend',
      backend,
      '--limit',
      '1',
    ]);
    expect(one.stdout).toMatch(/^3 matching messages\nmailbox.*\nWork .*\n… 2 more/);
  }
  const both = cli(['search', 'gas', '--user', 'sam', '--json', '--limit', '1']);
  expect({ code: both.code, error: both.json.error.code }).toEqual({ code: 2, error: 'USAGE' });
});

test('a backend the user has no storage for is a coded failure; a bad query is usage', () => {
  const r = cli(['search', 'gas', '--user', 'sam', '--backend', 'mbox', '--json']);
  expect(r.code).toBe(1);
  expect(r.json.error.code).toBe('LEGACY_NOT_CONFIGURED');
  expect(r.stderr).toMatch(/^LEGACY_NOT_CONFIGURED: /m);
  const bad = cli(['search', 'foo:bar', '--user', 'sam', '--backend', 'maildir', '--json']);
  expect(bad.code).toBe(2);
  expect(bad.json.error.code).toBe('INVALID_QUERY');
  const nobox = cli(['search', 'in:Nope', '--user', 'sam', '--json']);
  expect(nobox.code).toBe(2);
});
