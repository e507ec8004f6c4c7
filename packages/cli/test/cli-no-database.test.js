'use strict';

/*
 * A read-only command never creates a database (issue 30.4): with MAILGATE_HOME pointing at a
 * folder without a cluster and no DATABASE_URL, `ls`, `search`, `export`, `verify`,
 * `quarantine`, `user list` and `token revoke` end with NO_DATABASE naming the folder and the
 * way out, create nothing there (no cluster, no folder), and change no folder's mode.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { runCli } = require('@mailgate/test-support/db');
const { msg, mboxOf } = require('@mailgate/test-support/mail');

let tmp;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mailgate-nodb-'));
  fs.writeFileSync(path.join(tmp, 'in.mbox'), mboxOf([msg({ subject: 'x' })]));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const COMMANDS = [
  ['ls', '--user', 'alice'],
  ['search', 'hello', '--user', 'alice'],
  ['export', 'mbox', '--user', 'alice', '--mailbox', 'INBOX', '--out', 'OUT/x.mbox'],
  ['export', 'mh', '--user', 'alice', '--out', 'OUT/mh'],
  ['verify', 'mbox', 'IN', '--user', 'alice'],
  ['quarantine', '--user', 'alice'],
  ['user', 'list'],
  ['token', 'revoke', '--user', 'alice'],
];

test.each(COMMANDS.map((c) => [c.join(' '), c]))('%s: NO_DATABASE, nothing created', (_, c) => {
  const home = path.join(tmp, 'home', 'not-yet');
  const args = c.map((a) => a.replace('OUT', tmp).replace(/^IN$/, path.join(tmp, 'in.mbox')));
  const modeBefore = fs.statSync(tmp).mode;
  const r = runCli([...args, '--json'], {
    url: '',
    env: { MAILGATE_HOME: home, DATABASE_URL: '' },
  });
  expect({ code: r.code, error: r.json && r.json.error.code }).toEqual({
    code: 1,
    error: 'NO_DATABASE',
  });
  expect(r.json.error.message).toBe(
    `no mailgate database at ${home}; set MAILGATE_HOME or DATABASE_URL, or run an import`,
  );
  expect(r.stderr).toMatch(/^NO_DATABASE: no mailgate database at /m);
  expect(fs.existsSync(path.join(tmp, 'home'))).toBe(false);
  expect(fs.statSync(tmp).mode).toBe(modeBefore);
});
