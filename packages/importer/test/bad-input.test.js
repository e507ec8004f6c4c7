'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { useCliSuite } = require('@mailgate/test-support/db');
const { msg, mboxOf } = require('@mailgate/test-support/mail');

// The brief's bad-input list: each case imports what is good, quarantines what is not a
// message with a reason, and never aborts the import.
const suite = useCliSuite('bad');
const { tmp } = suite;
const cli = (args) => suite.cli(args);
const good = (n) => msg({ subject: `good ${n}`, body: `good body ${n}\n` });

function importMbox(name, buf, user = 'bad') {
  const file = path.join(tmp, name);
  fs.writeFileSync(file, buf);
  const r = cli(['import', 'mbox', file, '--user', user, '--json']);
  expect(r.code).toBe(0);
  return { r: r.json, file };
}
const subjects = (mailbox, user = 'bad') =>
  cli(['ls', '--user', user, '--mailbox', mailbox, '--order', 'uid', '--json']).json.messages.map(
    (m) => m.subject,
  );

test('NUL bytes: in a header → quarantined; in a body → stored exactly, text searchable', async () => {
  const nulHeader = Buffer.concat([
    Buffer.from('From: x@example.org\nSubject: bad\0subject\n\nbody\n'),
  ]);
  const nulBody = msg({ subject: 'nul body', body: 'before\0after zebra\n' });
  const { r, file } = importMbox('nul.mbox', mboxOf([good(1), nulHeader, nulBody]));
  expect(r).toMatchObject({ messages: 3, imported: 2, quarantined: 1 });
  expect(r.quarantine[0]).toMatchObject({ source: file, reason: 'nul-in-header' });
  expect(r.quarantine[0].position).toMatch(/^byte \d+/);
  expect(subjects('nul')).toEqual(['good 1', 'nul body']);
  const s = cli(['search', 'zebra', '--user', 'bad', '--mailbox', 'nul', '--json']).json;
  expect(s.uids).toEqual([2]);
  const q = cli(['quarantine', '--user', 'bad', '--json']).json;
  const entry = q.quarantine.find((x) => x.reason === 'nul-in-header');
  expect(entry).toBeTruthy();
  // its exact bytes, to fix and import again
  const raw = cli(['quarantine', '--user', 'bad', '--raw', String(entry.id)]);
  expect({ code: raw.code, stdout: raw.stdout }).toEqual({ code: 0, stdout: nulHeader.toString() });
  const none = cli(['quarantine', '--user', 'bad', '--raw', '999999', '--json']);
  expect({ code: none.code, error: none.json.error.code }).toEqual({
    code: 1,
    error: 'QUARANTINE_NOT_FOUND',
  });
  const out = path.join(tmp, 'nul-out.mbox');
  cli(['export', 'mbox', '--user', 'bad', '--mailbox', 'nul', '--out', out]);
  expect(fs.readFileSync(out).includes(nulBody)).toBe(true);
});

test('binary garbage and a message without headers are quarantined, the rest imported', () => {
  const garbage = Buffer.alloc(3000);
  for (let i = 0; i < garbage.length; i++) garbage[i] = (i * 7919) % 256;
  garbage[0] = 0x01;
  const noHeader = Buffer.from('this is just text without any header\nsecond line\n');
  const { r } = importMbox('garbage.mbox', mboxOf([good(1), garbage, noHeader, good(2)]));
  expect(r).toMatchObject({ messages: 4, imported: 2, quarantined: 2 });
  expect(r.quarantine.map((q) => q.reason).sort()).toEqual(['binary', 'no-header']);
  expect(subjects('garbage')).toEqual(['good 1', 'good 2']);
});

test('unescaped From lines in bodies do not split messages', () => {
  const body = 'Hi\n\nFrom the desk of the CEO, 10:30 meeting in 2001\nFrom here on, we go.\n';
  const m = msg({ subject: 'unescaped', body });
  const buf = Buffer.concat([
    Buffer.from('From a@example.org Tue Mar  5 10:00:00 2002\n'),
    m,
    Buffer.from('\n'),
    Buffer.from('From b@example.org Tue Mar  5 11:00:00 2002\n'),
    good(2),
  ]);
  const { r, file } = importMbox('unescaped.mbox', buf);
  expect(r).toMatchObject({ messages: 2, imported: 2, quarantined: 0 });
  expect(subjects('unescaped')).toEqual(['unescaped', 'good 2']);
  const out = path.join(tmp, 'unescaped-out.mbox');
  cli(['export', 'mbox', '--user', 'bad', '--mailbox', 'unescaped', '--out', out]);
  expect(fs.readFileSync(out).equals(fs.readFileSync(file))).toBe(true);
});

test('missing headers: no Date, no From, no Subject still import', () => {
  const bare = msg({ from: null, date: null, subject: null, to: null, headers: ['X-Only: 1'] });
  const { r } = importMbox('bare.mbox', mboxOf([bare]));
  expect(r).toMatchObject({ imported: 1, quarantined: 0 });
  const row = cli(['ls', '--user', 'bad', '--mailbox', 'bare', '--json']).json.messages[0];
  expect(row).toMatchObject({ subject: null, from: null, date: null });
  expect(row.internalDate).toBe('2002-03-01T10:00:00.000Z');
});

test('8-bit headers without a charset are decoded, bytes kept', () => {
  const latin1 = Buffer.from(
    'From: =?x?= Ren\xe9 <rene@example.org>\nSubject: Caf\xe9 cr\xe8me\n\nbody\n',
    'latin1',
  );
  const utf8 = Buffer.from(
    'From: Zoë <zoe@example.org>\nSubject: Grüße aus Köln\n\nbody\n',
    'utf8',
  );
  const { r, file } = importMbox('eightbit.mbox', mboxOf([latin1, utf8]));
  expect(r).toMatchObject({ imported: 2, quarantined: 0 });
  expect(subjects('eightbit')).toEqual(['Café crème', 'Grüße aus Köln']);
  expect(cli(['search', 'subject:köln', '--user', 'bad', '--json']).json.total).toBe(1);
  expect(cli(['verify', 'mbox', file, '--user', 'bad', '--mailbox', 'eightbit']).code).toBe(0);
});

test('CRLF/LF mixes inside one file and one message', () => {
  const mixed = Buffer.from(
    'From: a@example.org\r\nSubject: mixed\nTo: b@example.org\r\n\r\nline one\nline two\r\n',
  );
  const buf = Buffer.concat([
    Buffer.from('From a@example.org Tue Mar  5 10:00:00 2002\r\n'),
    mixed,
    Buffer.from('\r\n'),
    Buffer.from('From a@example.org Tue Mar  5 10:00:00 2002\n'),
    good(2),
  ]);
  const { r, file } = importMbox('mixed.mbox', buf);
  expect(r).toMatchObject({ messages: 2, imported: 2 });
  expect(subjects('mixed')).toEqual(['mixed', 'good 2']);
  const out = path.join(tmp, 'mixed-out.mbox');
  cli(['export', 'mbox', '--user', 'bad', '--mailbox', 'mixed', '--out', out]);
  expect(fs.readFileSync(out).equals(fs.readFileSync(file))).toBe(true);
});

test('a truncated file keeps every byte it has', () => {
  const full = mboxOf([good(1), msg({ subject: 'cut', body: 'x'.repeat(5000) })]);
  const cut = full.subarray(0, full.length - 3000);
  const { r, file } = importMbox('truncated.mbox', cut);
  expect(r.messages).toBe(2);
  expect(r.imported + r.quarantined).toBe(2);
  expect(cli(['verify', 'mbox', file, '--user', 'bad', '--mailbox', 'truncated']).code).toBe(0);
  expect(subjects('truncated')[0]).toBe('good 1');
  const out = path.join(tmp, 'truncated-out.mbox');
  cli(['export', 'mbox', '--user', 'bad', '--mailbox', 'truncated', '--out', out]);
  expect(fs.readFileSync(out).equals(cut)).toBe(true);
});

test('a 50 MB message imports and round-trips', () => {
  const line = 'The quick brown fox jumps over the lazy dog 0123456789 abcdefghijklmnopqrstuv\n';
  const big = msg({
    subject: 'big one',
    body: line.repeat(Math.ceil((50 * 1024 * 1024) / line.length)),
  });
  const { r, file } = importMbox('big.mbox', mboxOf([good(1), big, good(3)]));
  expect(r).toMatchObject({ messages: 3, imported: 3, quarantined: 0 });
  const rows = cli(['ls', '--user', 'bad', '--mailbox', 'big', '--order', 'uid', '--json']).json
    .messages;
  expect(rows[1].size).toBe(big.length);
  expect(cli(['verify', 'mbox', file, '--user', 'bad', '--mailbox', 'big']).code).toBe(0);
});

test('maildir: Dovecot index files and other non-messages are skipped, not imported', () => {
  const root = path.join(tmp, 'Maildir');
  for (const d of ['cur', 'new', 'tmp', '.Sent/cur', '.Sent/new', '.Sent/tmp']) {
    fs.mkdirSync(path.join(root, d), { recursive: true });
  }
  fs.writeFileSync(path.join(root, 'cur', '1000.M1.host:2,S'), good(1));
  fs.writeFileSync(path.join(root, 'new', '1001.M2.host'), good(2));
  fs.writeFileSync(path.join(root, '.Sent', 'cur', '1002.M3.host:2,RS'), good(3));
  fs.writeFileSync(path.join(root, 'tmp', '1003.M4.host'), good(4)); // not delivered yet
  fs.writeFileSync(path.join(root, 'dovecot.index'), Buffer.from([0, 1, 2, 3, 0, 0, 0, 9]));
  fs.writeFileSync(path.join(root, 'dovecot.index.log'), Buffer.alloc(64));
  fs.writeFileSync(
    path.join(root, 'dovecot-uidlist'),
    '3 V1234 N3\n1 :1000.M1.host\n2 :1001.M2.host\n',
  );
  fs.writeFileSync(path.join(root, 'subscriptions'), 'Sent\n');
  fs.writeFileSync(path.join(root, '.Sent', 'maildirfolder'), '');
  const r = cli(['import', 'maildir', root, '--user', 'md', '--json']);
  expect(r.code).toBe(0);
  expect(r.json).toMatchObject({ messages: 3, imported: 3, quarantined: 0 });
  const boxes = cli(['ls', '--user', 'md', '--json']).json.mailboxes;
  expect(boxes.map((b) => [b.name, b.total])).toEqual([
    ['INBOX', 2],
    ['Sent', 1],
  ]);
  const sent = cli(['ls', '--user', 'md', '--mailbox', 'Sent', '--json']).json.messages[0];
  expect(sent.flags).toEqual(['\\Answered', '\\Seen']);
  const out = path.join(tmp, 'Maildir-out');
  expect(cli(['export', 'maildir', '--user', 'md', '--out', out]).code).toBe(0);
  expect(fs.readdirSync(path.join(out, 'cur')).sort()).toEqual(['1000.M1.host:2,S']);
  expect(fs.readdirSync(path.join(out, 'new'))).toEqual(['1001.M2.host']);
  expect(fs.readdirSync(path.join(out, '.Sent', 'cur'))).toEqual(['1002.M3.host:2,RS']);
  expect(fs.readFileSync(path.join(out, '.Sent', 'cur', '1002.M3.host:2,RS')).equals(good(3))).toBe(
    true,
  );
  expect(cli(['verify', 'maildir', root, '--user', 'md']).code).toBe(0);
});
