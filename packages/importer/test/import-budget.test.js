'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { useCliSuite } = require('@mailgate/test-support/db');
const { msg } = require('@mailgate/test-support/mail');

// Issue 15.1 and 15.2 at the CLI: an import always ends with its report, and a message over
// the parse budget is kept raw (quarantined as 'too-complex') instead of stalling the batch.
const suite = useCliSuite('budget');
const { tmp } = suite;

/** An HTML message big enough that parsing it takes longer than a tiny pool idle timeout. */
function heavyMessage(n) {
  const para =
    '<p>Quarterly <b>numbers</b> for the west desk &amp; more, see <a href=x>here</a>.</p>\n';
  return msg({
    subject: `heavy ${n}`,
    headers: ['Content-Type: text/html; charset=utf-8'],
    body: para.repeat(60000),
  });
}

test('a batch slower than the database pool idle timeout still ends with the report (15.1)', () => {
  const dir = path.join(tmp, 'slow-mh');
  fs.mkdirSync(dir);
  const heavy = heavyMessage(1);
  fs.writeFileSync(path.join(dir, '1'), heavy);
  fs.writeFileSync(path.join(dir, '2'), heavy);
  fs.writeFileSync(path.join(dir, '3'), msg({ subject: 'ordinary' }));
  // The pool drops its idle connection 5 ms after the last query: the parse of the batch takes
  // far longer, so before the fix nothing kept Node alive and it exited 0 with no report.
  const env = { MAILGATE_IMPORT_WORKERS: '1', MAILGATE_DB_IDLE_TIMEOUT_MS: '5' };
  const r = suite.cli(['import', 'mh', dir, '--user', 'slow', '--json'], { env });
  expect(r.stdout).not.toBe('');
  expect(r.code).toBe(0);
  expect(r.json).toMatchObject({ messages: 3, imported: 3, quarantined: 0 });
  const ls = suite.cli(['ls', '--user', 'slow', '--mailbox', 'INBOX', '--order', 'uid', '--json'], {
    env,
  });
  expect(ls.json.messages.map((m) => m.subject).sort()).toEqual(['heavy 1', 'heavy 1', 'ordinary']);
});

test('a message over the parse memory budget is quarantined raw as too-complex, the rest imported (15.2)', () => {
  const dir = path.join(tmp, 'hog-mh');
  fs.mkdirSync(dir);
  // 1.2 million recipients: their address objects need far more than a 16 MB heap
  const hog = Buffer.concat([
    Buffer.from('From: a@example.org\nSubject: hog\nTo: '),
    Buffer.alloc(6 * 1024 * 1024, 'a@b, '),
    Buffer.from('\n\nbody\n'),
  ]);
  fs.writeFileSync(path.join(dir, '1'), msg({ subject: 'before' }));
  fs.writeFileSync(path.join(dir, '2'), hog);
  fs.writeFileSync(path.join(dir, '3'), msg({ subject: 'after' }));
  const env = { MAILGATE_IMPORT_WORKERS: '1', MAILGATE_PARSE_MEMORY_MB: '16' };
  const r = suite.cli(['import', 'mh', dir, '--user', 'hog', '--json'], { env });
  expect(r.code).toBe(0);
  expect(r.json).toMatchObject({ messages: 3, imported: 2, quarantined: 1 });
  expect(r.json.quarantine[0]).toMatchObject({ reason: 'too-complex' });
  const ls = suite.cli(['ls', '--user', 'hog', '--mailbox', 'INBOX', '--order', 'uid', '--json']);
  expect(ls.json.messages.map((m) => m.subject).sort()).toEqual(['after', 'before']);
  const q = suite.cli(['quarantine', '--user', 'hog', '--json']).json;
  expect(q.quarantine).toHaveLength(1);
  expect(q.quarantine[0]).toMatchObject({ reason: 'too-complex', size: hog.length });
});
