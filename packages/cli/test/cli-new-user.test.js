'use strict';

/*
 * What a new user's trial ran into, as the CLI's one error path sees it: an export to a folder
 * that is not there, a password for a user an import created, verify of a missing source or
 * mailbox, an import of a missing file (no user, no progress), the password rule, and the
 * IMAP listener's port in use. Each failure: `CODE: message` on stderr, no stack trace, exit 1
 * (2 for usage), with --json exactly one {"error":{code,message}} object on stdout.
 */

const net = require('node:net');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { useServiceSuite, CLI } = require('@mailgate/test-support/db');
const { mboxOf, msg } = require('@mailgate/test-support/mail');
const { STACK, onlyError } = require('./error-output');

const suite = useServiceSuite('cli-new-user');

/** A failure printed the one way: exit code, `CODE: ` on stderr, no stack trace. */
function failed(r, code, exitCode = 1) {
  expect({ code: r.code, stderr: r.stderr }).toEqual({
    code: exitCode,
    stderr: expect.stringMatching(new RegExp(`^${code}: `, 'm')),
  });
  expect(r.stderr).not.toMatch(STACK);
  expect(r.stderr).not.toMatch(/Unhandled|INTERNAL/);
}

let inbox;
beforeAll(() => {
  inbox = path.join(suite.tmp, 'inbox.mbox');
  fs.writeFileSync(inbox, mboxOf([msg({ subject: 'one' }), msg({ subject: 'two' })]));
  expect(suite.cli(['import', 'mbox', inbox, '--user', 'alice', '--quiet']).code).toBe(0);
  fs.writeFileSync(path.join(suite.tmp, 'a-file'), 'not a folder\n');
});

describe('export to a place it cannot write', () => {
  const mbox = (out, json = true) =>
    suite.cli([
      'export',
      'mbox',
      '--user',
      'alice',
      '--mailbox',
      'INBOX',
      '--out',
      out,
      ...(json ? ['--json'] : []),
    ]);

  test('mbox into a folder that does not exist: OUTPUT_NOT_WRITABLE naming the path', () => {
    const out = path.join(suite.tmp, 'nodir', 'x.mbox');
    const r = mbox(out);
    failed(r, 'OUTPUT_NOT_WRITABLE');
    const e = onlyError(r);
    expect(e.code).toBe('OUTPUT_NOT_WRITABLE');
    expect(e.message).toContain(out);
    expect(e.message).toMatch(/does not exist/);
    const human = mbox(out, false);
    failed(human, 'OUTPUT_NOT_WRITABLE');
    expect(human.stdout).toBe('');
    // Nothing half-written next to it either.
    expect(fs.readdirSync(suite.tmp).filter((f) => f.includes('.tmp-'))).toEqual([]);
  });

  test('mbox under a file, and onto a folder', () => {
    const under = path.join(suite.tmp, 'a-file', 'x.mbox');
    const r = mbox(under);
    failed(r, 'OUTPUT_NOT_WRITABLE');
    expect(onlyError(r).message).toContain(under);
    const onto = mbox(suite.tmp);
    failed(onto, 'OUTPUT_NOT_WRITABLE');
    expect(onlyError(onto).message).toMatch(/is a folder/);
  });

  test('maildir and mh under a file, or onto a file', () => {
    for (const kind of ['maildir', 'mh']) {
      for (const out of [path.join(suite.tmp, 'a-file', 'tree'), path.join(suite.tmp, 'a-file')]) {
        const r = suite.cli(['export', kind, '--user', 'alice', '--out', out, '--json']);
        failed(r, 'OUTPUT_NOT_WRITABLE');
        expect(onlyError(r)).toEqual({
          code: 'OUTPUT_NOT_WRITABLE',
          message: expect.stringContaining(`Cannot write ${out}: `),
        });
      }
      // A tree whose parent folders do not exist yet is still made (mkdir -p).
      const deep = path.join(suite.tmp, `new-${kind}`, 'deeper');
      const ok = suite.cli(['export', kind, '--user', 'alice', '--out', deep, '--json']);
      expect(ok.code).toBe(0);
      expect(JSON.parse(ok.stdout).messages).toBe(2);
    }
  });

  test('an unwritable folder: permission denied', () => {
    const ro = path.join(suite.tmp, 'read-only');
    fs.mkdirSync(ro);
    fs.chmodSync(ro, 0o555);
    // root may write anywhere: as root, the CLI runs as nobody for this one. The check runs
    // before the store is opened, so nobody needs no database access.
    const root = process.getuid() === 0;
    if (root) fs.chmodSync(suite.tmp, 0o755);
    try {
      const out = path.join(ro, 'x.mbox');
      const run = spawnSync(
        process.execPath,
        [CLI, 'export', 'mbox', '--user', 'alice', '--mailbox', 'INBOX', '--out', out, '--json'],
        {
          env: { ...process.env, DATABASE_URL: suite.db.url, LOG_LEVEL: 'error' },
          encoding: 'utf8',
          ...(root ? { uid: 65534, gid: 65534 } : {}),
        },
      );
      const r = { code: run.status, stdout: run.stdout, stderr: run.stderr };
      if (
        root &&
        /Cannot find module|EACCES: permission denied, (open|scandir|stat) '\/work/.test(r.stderr)
      ) {
        console.log(`skipped: the CLI cannot run as nobody here: ${r.stderr.slice(0, 300)}`);
        return;
      }
      failed(r, 'OUTPUT_NOT_WRITABLE');
      expect(onlyError(r)).toEqual({
        code: 'OUTPUT_NOT_WRITABLE',
        message: `Cannot write ${out}: permission denied (${ro})`,
      });
    } finally {
      fs.chmodSync(ro, 0o755);
    }
  });
});

describe('user passwd', () => {
  test('a user made by import gets a password, and can then log in', async () => {
    // Before: user add answers USER_EXISTS, and nothing else sets a password.
    const add = suite.cli(['user', 'add', 'alice', '--password-env', 'PW', '--json'], {
      env: { PW: 'alice new password' },
    });
    expect(onlyError(add).code).toBe('USER_EXISTS');
    const r = suite.cli(['user', 'passwd', 'alice', '--password-env', 'PW', '--json'], {
      env: { PW: 'alice new password' },
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ name: 'alice', replaced: false });
    await expect(
      suite.service.users.verifyLogin('alice', 'alice new password'),
    ).resolves.toMatchObject({ name: 'alice' });
    const again = suite.cli(['user', 'passwd', 'alice', '--password-env', 'PW'], {
      env: { PW: 'alice newer password' },
    });
    expect(again.code).toBe(0);
    expect(again.stderr).toMatch(/replaced the password for alice/);
    await expect(suite.service.users.verifyLogin('alice', 'alice new password')).rejects.toThrow(
      /Wrong user name or password/,
    );
    await expect(
      suite.service.users.verifyLogin('alice', 'alice newer password'),
    ).resolves.toMatchObject({ name: 'alice' });
  });

  test('unknown user, missing variable, no --password-env', () => {
    const env = { env: { PW: 'long enough pw' } };
    failed(suite.cli(['user', 'passwd', 'ghost', '--password-env', 'PW'], env), 'USER_NOT_FOUND');
    failed(suite.cli(['user', 'passwd', 'alice', '--password-env', 'NOPE_UNSET']), 'USAGE', 2);
    failed(suite.cli(['user', 'passwd', 'alice']), 'USAGE', 2);
    expect(suite.cli(['user', 'passwd', '--help']).stdout).toMatch(/--password-env/);
    expect(suite.cli(['user', '--help']).stdout).toMatch(/passwd/);
  });
});

test('password rule: the same INVALID_PASSWORD for user add and user passwd', () => {
  const short = { env: { PW: 'short' } };
  const add = suite.cli(['user', 'add', 'lee', '--password-env', 'PW', '--json'], short);
  failed(add, 'INVALID_PASSWORD');
  expect(onlyError(add)).toEqual({
    code: 'INVALID_PASSWORD',
    message: 'Password not accepted: it must be at least 8 characters',
  });
  // Refused before anything was created.
  failed(suite.cli(['ls', '--user', 'lee']), 'USER_NOT_FOUND');
  const passwd = suite.cli(['user', 'passwd', 'alice', '--password-env', 'PW', '--json'], short);
  expect(onlyError(passwd).code).toBe('INVALID_PASSWORD');
  const long = { env: { PW: 'x'.repeat(1025) } };
  expect(
    onlyError(suite.cli(['user', 'add', 'lee', '--password-env', 'PW', '--json'], long)).message,
  ).toMatch(/at most 1024/);
  expect(
    suite.cli(['user', 'add', 'lee', '--password-env', 'PW'], { env: { PW: '8 chars!' } }).code,
  ).toBe(0);
});

describe('verify', () => {
  test('a missing source is SOURCE_NOT_FOUND, as for import, for every kind', () => {
    for (const kind of ['mbox', 'maildir', 'mh']) {
      const missing = path.join(suite.tmp, `missing-${kind}`);
      const r = suite.cli([
        'verify',
        kind,
        missing,
        '--user',
        'alice',
        '--mailbox',
        'INBOX',
        '--json',
      ]);
      failed(r, 'SOURCE_NOT_FOUND');
      expect(onlyError(r).message).toContain(missing);
    }
    // A folder given to mbox, a file given to maildir.
    failed(suite.cli(['verify', 'mbox', suite.tmp, '--user', 'alice']), 'SOURCE_NOT_FOUND');
    failed(suite.cli(['verify', 'maildir', inbox, '--user', 'alice']), 'SOURCE_NOT_FOUND');
  });

  test('a mailbox that does not exist is MAILBOX_NOT_FOUND, not every message missing', () => {
    const r = suite.cli([
      'verify',
      'mbox',
      inbox,
      '--user',
      'alice',
      '--mailbox',
      'Nope',
      '--json',
    ]);
    failed(r, 'MAILBOX_NOT_FOUND');
    expect(onlyError(r)).toEqual({ code: 'MAILBOX_NOT_FOUND', message: 'No such mailbox: Nope' });
    expect(r.stderr).not.toMatch(/VERIFY_FAILED/);
    const named = path.join(suite.tmp, 'Other.mbox');
    fs.copyFileSync(inbox, named);
    failed(suite.cli(['verify', 'mbox', named, '--user', 'alice']), 'MAILBOX_NOT_FOUND');
    // The mailbox that exists still verifies.
    const ok = suite.cli([
      'verify',
      'mbox',
      inbox,
      '--user',
      'alice',
      '--mailbox',
      'INBOX',
      '--json',
    ]);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ ok: true, present: 2 });
  });
});

test('import of a missing source creates no user and prints no progress line', () => {
  const missing = path.join(suite.tmp, 'missing.mbox');
  for (const args of [
    ['import', 'mbox', missing, '--user', 'ghost', '--json'],
    ['import', 'maildir', path.join(suite.tmp, 'no-maildir'), '--user', 'ghost', '--json'],
    ['import', 'mh', inbox, '--user', 'ghost', '--json'],
  ]) {
    const r = suite.cli(args);
    failed(r, 'SOURCE_NOT_FOUND');
    expect(onlyError(r).code).toBe('SOURCE_NOT_FOUND');
    expect(r.stderr).not.toMatch(/"progress"/);
  }
  failed(suite.cli(['ls', '--user', 'ghost']), 'USER_NOT_FOUND');
});

test('IMAP port in use: PORT_IN_USE names IMAP_PORT/IMAP_HOST, not PORT/HOST', async () => {
  const blocker = net.createServer();
  await new Promise((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const free = net.createServer();
  await new Promise((resolve) => free.listen(0, '127.0.0.1', resolve));
  const apiPort = free.address().port;
  await new Promise((resolve) => free.close(resolve));
  const { port } = blocker.address();
  try {
    const r = suite.cli(['serve'], {
      env: { PORT: String(apiPort), HOST: '127.0.0.1', IMAP_PORT: String(port) },
    });
    failed(r, 'PORT_IN_USE');
    expect(r.stderr).toMatch(
      new RegExp(
        `^PORT_IN_USE: Port ${port} on 127.0.0.1 is already in use \\(set IMAP_PORT/IMAP_HOST or stop the other server\\)$`,
        'm',
      ),
    );
    expect(r.stdout).toBe('');
    const api = suite.cli(['serve', '--no-imap'], {
      env: { PORT: String(port), HOST: '127.0.0.1' },
    });
    expect(api.stderr).toMatch(/\(set PORT\/HOST or stop the other server\)/);
  } finally {
    await new Promise((resolve) => blocker.close(resolve));
  }
});

test('on a terminal, an import with a quarantined entry prints the report, not JSON log lines', () => {
  const bad = path.join(suite.tmp, 'tty-bad.mbox');
  fs.writeFileSync(
    bad,
    mboxOf([
      msg({ subject: 'fine' }),
      Buffer.from('From: x@example.org\nSubject: bad\0nul\n\nbody\n'),
    ]),
  );
  // script(1) gives the CLI a pseudo-terminal; LOG_LEVEL info, the default a new user has
  const cmd = [process.execPath, CLI, 'import', 'mbox', bad, '--user', 'tty']
    .map((a) => `'${a}'`)
    .join(' ');
  const run = spawnSync('script', ['-qec', cmd, '/dev/null'], {
    env: { ...process.env, DATABASE_URL: suite.db.url, LOG_LEVEL: 'info' },
    encoding: 'utf8',
  });
  expect(run.status).toBe(0);
  expect(run.stdout).toMatch(/quarantined .*tty-bad\.mbox byte \d+: nul-in-header/);
  expect(run.stdout).not.toMatch(/"level":\s*40/);
  // without a terminal (a script, a service) the log lines stay
  const piped = suite.cli(['import', 'mbox', bad, '--user', 'tty2'], {
    env: { LOG_LEVEL: 'info' },
  });
  expect(piped.stderr).toMatch(/"msg":"quarantined"/);
});

test('ls --limit without --mailbox is a usage error, not silently ignored', () => {
  const r = suite.cli(['ls', '--user', 'alice', '--limit', '2', '--json']);
  expect(r.code).toBe(2);
  expect(onlyError(r)).toMatchObject({
    code: 'USAGE',
    message: expect.stringMatching(/--mailbox/),
  });
});
