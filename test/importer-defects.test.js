'use strict';

/*
 * Defects of issue 11 in the import/export/verify paths, each found by trying mailgate as a
 * new user would: export maildir of a multi-folder MH import, verify of a source with a
 * quarantined entry, imports of directories without mail.
 */

const fs = require('node:fs');
const path = require('node:path');
const { useCliSuite } = require('./support/db');
const { msg } = require('./support/mail');

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
