'use strict';

/*
 * What the CLI prints on stderr for a person (issue 30.10): `--quiet` prints nothing but
 * errors; without --json or LOG_LEVEL no pino JSON line appears (warnings are text lines), and
 * `search --backend mbox` over a folder of other files says so in one line, not one per file.
 */

const fs = require('node:fs');
const path = require('node:path');
const { useCliSuite } = require('@mailgate/test-support/db');
const { msg, mboxOf } = require('@mailgate/test-support/mail');

const suite = useCliSuite('cli-quiet');
// As a person runs it: no LOG_LEVEL (runCli sets one for the other tests).
const person = (args) => suite.cli(args, { env: { LOG_LEVEL: '', MAILGATE_HOME: suite.tmp } });
// pino's JSON records (progress lines off a terminal are JSON by design, README "CLI").
const jsonLines = (text) => text.split('\n').filter((l) => /^\s*\{.*"level":/.test(l));

let file;
beforeAll(() => {
  file = path.join(suite.tmp, 'inbox.mbox');
  const garbage = Buffer.from('this is just text without any header\n');
  fs.writeFileSync(file, mboxOf([msg({ subject: 'one' }), garbage, msg({ subject: 'hello' })]));
});

test('import --quiet prints nothing at all, even with quarantined entries', () => {
  const r = person(['import', 'mbox', file, '--user', 'quiet', '--quiet']);
  expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
    code: 0,
    stdout: '',
    stderr: '',
  });
});

test('without --json or LOG_LEVEL: the report and text lines, no JSON line', () => {
  const r = person(['import', 'mbox', file, '--user', 'plain']);
  expect(r.code).toBe(0);
  expect(r.stderr).toMatch(/^done: 3 messages, 2 imported/m);
  expect(r.stderr).toMatch(/quarantined/);
  expect(jsonLines(r.stderr)).toEqual([]);
  // the user this import made has no password: the one step to log in (30.7)
  expect(r.stderr).toContain(
    'next: user plain has no password yet; to log in (API, IMAP, web page): mailgate user passwd plain --password-env VAR',
  );
  const again = person(['import', 'mbox', file, '--user', 'plain']);
  expect(again.stderr).not.toContain('next: user plain');
});

test('search --backend mbox over a folder of other files: one line, not one per file', () => {
  const dir = path.join(suite.tmp, 'legacy');
  fs.mkdirSync(dir);
  fs.copyFileSync(file, path.join(dir, 'inbox'));
  for (let i = 0; i < 40; i++) fs.writeFileSync(path.join(dir, `note-${i}.txt`), `note ${i}\n`);
  expect(person(['legacy', 'add-user', 'leg', '--mbox-dir', dir]).code).toBe(0);
  const r = person(['search', 'subject:hello', '--user', 'leg', '--backend', 'mbox']);
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/^1 matching messages/m);
  expect(jsonLines(r.stderr)).toEqual([]);
  const lines = r.stderr.split('\n').filter((l) => /skipped/.test(l));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(
    /^mailgate warning: legacy mbox: skipped files that are not mboxes \(skipped=40/,
  );
  const quiet = person([
    'search',
    'subject:hello',
    '--user',
    'leg',
    '--backend',
    'mbox',
    '--quiet',
  ]);
  expect(quiet.stderr).toBe('');
});
