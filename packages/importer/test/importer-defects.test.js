'use strict';

/*
 * Defects of issue 11 in the import/export/verify paths, each found by trying mailgate as a
 * new user would: export maildir of a multi-folder MH import, verify of a source with a
 * quarantined entry, imports of directories without mail.
 */

const fs = require('node:fs');
const path = require('node:path');
const { useCliSuite } = require('@mailgate/test-support/db');
const { msg } = require('@mailgate/test-support/mail');

const suite = useCliSuite('importer-defects');
const { tmp } = suite;
const cli = (args) => suite.cli(args);

function writeFiles(root, files, mtime = new Date('2002-03-05T10:00:00Z')) {
  for (const [rel, buf] of Object.entries(files)) {
    const p = path.join(root, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, buf);
    fs.utimesSync(p, mtime, mtime);
  }
}

test('export maildir after import mh of several folders: one file per message, no crash', () => {
  // Same file numbers and mtimes in every folder: the names a maildir export makes up for
  // MH messages collide across folders unless they are unique per folder.
  const root = path.join(tmp, 'mh');
  writeFiles(root, {
    1: msg({ subject: 'inbox 1' }),
    2: msg({ subject: 'inbox 2' }),
    'work/1': msg({ subject: 'work 1' }),
    'work/2': msg({ subject: 'work 2' }),
    'work/old/1': msg({ subject: 'old 1' }),
  });
  expect(cli(['import', 'mh', root, '--user', 'mh', '--quiet']).code).toBe(0);
  const out = path.join(tmp, 'mh-as-maildir');
  const r = cli(['export', 'maildir', '--user', 'mh', '--out', out, '--json']);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.json).toMatchObject({ messages: 5, mailboxes: 3 });
  const subjectsIn = (dir) =>
    ['cur', 'new']
      .flatMap((sub) =>
        fs
          .readdirSync(path.join(out, dir, sub))
          .map((n) => fs.readFileSync(path.join(out, dir, sub, n), 'latin1')),
      )
      .map((raw) => /^Subject: (.*)$/m.exec(raw)[1])
      .sort();
  expect(subjectsIn('.')).toEqual(['inbox 1', 'inbox 2']);
  expect(subjectsIn('.work')).toEqual(['work 1', 'work 2']);
  expect(subjectsIn('.work.old')).toEqual(['old 1']);
  // The exported tree imports back to the same mailboxes.
  expect(cli(['import', 'maildir', out, '--user', 'mh2', '--quiet']).code).toBe(0);
  const boxes = cli(['ls', '--user', 'mh2', '--json']).json.mailboxes;
  expect(boxes.map((b) => [b.name, b.total])).toEqual([
    ['INBOX', 2],
    ['work', 2],
    ['work/old', 1],
  ]);
});

test('verify: a quarantined binary file is reported as quarantined (checked), exit 0', () => {
  const root = path.join(tmp, 'Maildir-bin');
  const garbage = Buffer.alloc(2000);
  for (let i = 0; i < garbage.length; i++) garbage[i] = (i * 7919) % 256;
  garbage[0] = 0x01;
  writeFiles(root, {
    'cur/1000.M1.host:2,S': msg({ subject: 'one' }),
    'cur/1001.M2.host:2,': garbage,
    'new/1002.M3.host': msg({ subject: 'three' }),
  });
  const imp = cli(['import', 'maildir', root, '--user', 'bin', '--json']);
  expect(imp.json).toMatchObject({ messages: 3, imported: 2, quarantined: 1 });
  const v = cli(['verify', 'maildir', root, '--user', 'bin', '--json']);
  expect(v.code).toBe(0);
  expect(v.json).toMatchObject({
    ok: true,
    messages: 3,
    present: 2,
    quarantined: 1,
    missing: 0,
    mismatched: 0,
  });
  const human = cli(['verify', 'maildir', root, '--user', 'bin']);
  expect(human.code).toBe(0);
  expect(human.stderr).toMatch(
    /^OK: 3 source messages, 2 present and identical, 1 kept byte-exact in quarantine/m,
  );
});

test('verify: a damaged quarantined copy or a missing message still fails', async () => {
  const root = path.join(tmp, 'Maildir-bin');
  // The quarantined copy is checked byte for byte: one changed byte is a difference.
  await suite.db.knex.raw(
    `UPDATE quarantine SET raw = overlay(raw placing '\\x00'::bytea from 10)
      WHERE user_id = (SELECT id FROM users WHERE name = 'bin')`,
  );
  const v = cli(['verify', 'maildir', root, '--user', 'bin', '--json']);
  expect(v.code).toBe(1);
  expect(v.json).toMatchObject({ ok: false, present: 2, quarantined: 0, mismatched: 1 });
  expect(v.json.problems).toEqual([
    { mailbox: 'INBOX', position: 'cur/1001.M2.host:2,', problem: 'quarantined bytes differ' },
  ]);
  writeFiles(root, { 'cur/1003.M4.host:2,S': msg({ subject: 'four, never imported' }) });
  const again = cli(['verify', 'maildir', root, '--user', 'bin']);
  expect(again.code).toBe(1);
  expect(again.stderr).toMatch(/^FAILED: .* 1 missing, 1 differ/m);
  expect(again.stderr).toMatch(/^VERIFY_FAILED: /m);
});

test('import of a directory without mail: coded warning NO_MAIL_FOUND, skipped files named', () => {
  const empty = path.join(tmp, 'empty-mh');
  fs.mkdirSync(empty, { recursive: true });
  const r = cli(['import', 'mh', empty, '--user', 'none', '--json']);
  expect(r.code).toBe(0);
  expect(r.json).toMatchObject({ messages: 0, imported: 0, skipped: 0 });
  expect(r.json.warnings).toEqual([
    { code: 'NO_MAIL_FOUND', message: `No mail found in ${empty}` },
  ]);

  // Empty files and files that are not numbered MH messages: named, with the reason.
  const mh = path.join(tmp, 'mh-no-mail');
  writeFiles(mh, { 1: Buffer.alloc(0), 'work/2': Buffer.alloc(0), notes: msg() });
  const human = cli(['import', 'mh', mh, '--user', 'none']);
  expect(human.code).toBe(0);
  expect(human.stderr).toMatch(/^done: 0 messages/m);
  expect(human.stderr).toContain(`skipped ${path.join(mh, '1')}: empty file`);
  expect(human.stderr).toContain(`skipped ${path.join(mh, 'work', '2')}: empty file`);
  expect(human.stderr).toContain(`skipped ${path.join(mh, 'notes')}: not a numbered MH message`);
  expect(human.stderr).toMatch(
    new RegExp(`^NO_MAIL_FOUND: No mail found in ${mh} \\(3 files skipped, not mail\\)$`, 'm'),
  );

  const md = path.join(tmp, 'Maildir-no-mail');
  writeFiles(md, { 'cur/1.M1.host:2,S': Buffer.alloc(0), 'new/.keep': Buffer.alloc(0) });
  const j = cli(['import', 'maildir', md, '--user', 'none', '--json']).json;
  expect(j.skippedFiles).toEqual([
    { path: path.join(md, 'new', '.keep'), reason: 'hidden file' },
    { path: path.join(md, 'cur', '1.M1.host:2,S'), reason: 'empty file' },
  ]);
  expect(j.warnings.map((w) => w.code)).toEqual(['NO_MAIL_FOUND']);

  // Mail found: no warning, and an empty file beside it is still named.
  writeFiles(mh, { 3: msg({ subject: 'three' }) });
  const ok = cli(['import', 'mh', mh, '--user', 'none', '--json']).json;
  expect(ok).toMatchObject({ messages: 1, imported: 1, skipped: 3, warnings: [] });
});
