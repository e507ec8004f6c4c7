'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { useCliSuite } = require('@mailgate/test-support/db');
const { msg, mboxOf } = require('@mailgate/test-support/mail');

const suite = useCliSuite('mbox');
const { tmp } = suite;
const cli = (args) => suite.cli(args);

const messages = [
  msg({ subject: 'Quarterly report', body: 'Numbers are happy this time.\n' }),
  msg({
    from: 'Carol <carol@example.com>',
    subject: 'Body with From lines',
    body: 'Hi,\n\nFrom here on 10:30 in 2001 things changed.\nFrom me Tue Mar  5 10:00:00 2002\n>From quoted\n',
    headers: ['Status: RO', 'X-Status: F'],
  }),
  msg({ subject: 'Unhappy customer', body: 'I am unhappy.\n' }),
  msg({ subject: 'Quarterly report', body: 'Numbers are happy this time.\n' }), // exact duplicate
];

test('imports an mbox, keeps flags, and round-trips byte for byte', () => {
  const file = path.join(tmp, 'inbox.mbox');
  fs.writeFileSync(file, mboxOf(messages));
  const r = cli(['import', 'mbox', file, '--user', 'alice', '--json']);
  expect(r.code).toBe(0);
  expect(r.json).toMatchObject({ messages: 4, imported: 4, duplicates: 0, quarantined: 0 });
  expect(r.json.bytes).toBe(messages.reduce((n, m) => n + m.length, 0));
  expect(typeof r.json.seconds).toBe('number');

  const ls = cli(['ls', '--user', 'alice', '--json']).json;
  expect(ls.mailboxes).toEqual([
    expect.objectContaining({ name: 'INBOX', total: 4, unseen: 3, uidnext: 5 }),
  ]);
  const rows = cli(['ls', '--user', 'alice', '--mailbox', 'INBOX', '--order', 'uid', '--json']).json
    .messages;
  expect(rows.map((x) => x.uid)).toEqual([1, 2, 3, 4]);
  expect(rows[1]).toMatchObject({
    subject: 'Body with From lines',
    from: { name: 'Carol', address: 'carol@example.com' },
    flags: ['\\Flagged', '\\Seen'],
  });
  expect(rows[1].internalDate).toBe('2002-03-02T10:00:00.000Z');

  const out = path.join(tmp, 'out.mbox');
  expect(cli(['export', 'mbox', '--user', 'alice', '--mailbox', 'INBOX', '--out', out]).code).toBe(
    0,
  );
  expect(fs.readFileSync(out).equals(fs.readFileSync(file))).toBe(true);

  const v = cli(['verify', 'mbox', file, '--user', 'alice', '--mailbox', 'INBOX', '--json']);
  expect(v.code).toBe(0);
  expect(v.json).toMatchObject({ ok: true, messages: 4, present: 4, missing: 0 });
});

test('re-importing stores nothing twice', () => {
  const file = path.join(tmp, 'inbox.mbox');
  const r = cli(['import', 'mbox', file, '--user', 'alice', '--json']);
  expect(r.json).toMatchObject({ messages: 4, imported: 0, duplicates: 4 });
  expect(cli(['ls', '--user', 'alice', '--json']).json.mailboxes[0].total).toBe(4);
});

test('verify fails when one byte of one source message changes', () => {
  const file = path.join(tmp, 'inbox.mbox');
  const changed = path.join(tmp, 'changed.mbox');
  const buf = Buffer.from(fs.readFileSync(file));
  const at = buf.indexOf('unhappy');
  buf[at] = 'U'.charCodeAt(0);
  fs.writeFileSync(changed, buf);
  const v = cli(['verify', 'mbox', changed, '--user', 'alice', '--mailbox', 'INBOX', '--json']);
  expect(v.code).toBe(1);
  expect(v.json).toMatchObject({ ok: false, present: 3, missing: 1 });
});

test('search: words vs substrings, fields, flags', () => {
  const s = (q) => cli(['search', q, '--user', 'alice', '--mailbox', 'INBOX', '--json']).json;
  expect(s('happy').uids).toEqual([1, 4]);
  expect(s('text:happy').uids).toEqual([1, 3, 4]);
  expect(s('from:example.com').uids).toEqual([2]);
  expect(s('is:flagged').uids).toEqual([2]);
  expect(s('-is:read').uids).toEqual([1, 3, 4]);
  expect(s('').total).toBe(4);
  const bad = cli(['search', 'from:', '--user', 'alice', '--json']);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(/INVALID_QUERY/);
});

test('mailbox option and other variants export', () => {
  const file = path.join(tmp, 'Archive.mbx');
  fs.writeFileSync(file, mboxOf(messages.slice(0, 2)));
  expect(cli(['import', 'mbox', file, '--user', 'alice', '--json']).json.imported).toBe(2);
  const names = cli(['ls', '--user', 'alice', '--json']).json.mailboxes.map((m) => m.name);
  expect(names).toEqual(['INBOX', 'Archive']);
  const out = path.join(tmp, 'archive-o.mbox');
  cli([
    'export',
    'mbox',
    '--user',
    'alice',
    '--mailbox',
    'Archive',
    '--out',
    out,
    '--variant',
    'mboxrd',
  ]);
  // mboxrd written from scratch by us equals the mboxrd file built by the test helper.
  expect(fs.readFileSync(out).toString()).toBe(mboxOf(messages.slice(0, 2)).toString());
});

test('CRLF mbox round-trips exactly', () => {
  const crlf = [
    msg({ eol: '\r\n', subject: 'crlf one' }),
    msg({ eol: '\r\n', subject: 'crlf two', body: 'line\r\nFrom x\r\n' }),
  ];
  const file = path.join(tmp, 'crlf.mbox');
  const data = Buffer.from(
    mboxOf(crlf)
      .toString()
      .replace(/(?<!\r)\n/g, '\r\n'),
  );
  fs.writeFileSync(file, data);
  const r = cli(['import', 'mbox', file, '--user', 'alice', '--json']);
  expect(r.json).toMatchObject({ messages: 2, imported: 2, quarantined: 0 });
  const out = path.join(tmp, 'crlf-out.mbox');
  cli(['export', 'mbox', '--user', 'alice', '--mailbox', 'crlf', '--out', out]);
  expect(fs.readFileSync(out).equals(data)).toBe(true);
  const rows = cli(['ls', '--user', 'alice', '--mailbox', 'crlf', '--order', 'uid', '--json']).json
    .messages;
  expect(rows.map((x) => x.subject)).toEqual(['crlf one', 'crlf two']);
});
