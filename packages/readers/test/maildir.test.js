'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { readMaildir, parseMaildirInfo, formatMaildirName } = require('../lib');

function write(root, rel, content, mtimeSec) {
  const p = path.join(root, rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, content);
  if (mtimeSec) fs.utimesSync(p, mtimeSec, mtimeSec);
  return p;
}

function mkMaildir(root, rel = '') {
  for (const sub of ['cur', 'new', 'tmp'])
    fs.mkdirSync(path.join(root, rel, sub), { recursive: true });
}

async function collect(root, opts = {}) {
  const out = [];
  for await (const m of readMaildir(root, opts)) out.push(m);
  return out;
}

describe('parseMaildirInfo / formatMaildirName', () => {
  test('maps letters to flags and keyword letters', () => {
    expect(parseMaildirInfo('1234.M1P2.host,S=10:2,FRSTPDacz')).toEqual({
      baseName: '1234.M1P2.host,S=10',
      flags: ['$Forwarded', '\\Answered', '\\Deleted', '\\Draft', '\\Flagged', '\\Seen'],
      keywordLetters: 'acz',
    });
    expect(parseMaildirInfo('1234.x.y')).toEqual({
      baseName: '1234.x.y',
      flags: [],
      keywordLetters: '',
    });
    expect(parseMaildirInfo('1234.x.y:1,S').flags).toEqual([]);
    expect(parseMaildirInfo('1234.x.y!2,S')).toEqual({
      baseName: '1234.x.y',
      flags: ['\\Seen'],
      keywordLetters: '',
    });
  });
  test('formats letters in ASCII order and round trips', () => {
    const name = formatMaildirName('b', ['\\Seen', '\\Flagged', '\\Recent', '$Forwarded'], 'ca');
    expect(name).toBe('b:2,FPSac');
    const info = parseMaildirInfo(name);
    expect(formatMaildirName(info.baseName, info.flags, info.keywordLetters)).toBe(name);
    expect(formatMaildirName('b')).toBe('b:2,');
  });
});

describe('readMaildir', () => {
  let root;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'readers-maildir-'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  test('dovecot layout: uidlist order, keywords, control files skipped, Maildir++ folders', async () => {
    mkMaildir(root);
    write(
      root,
      'dovecot-uidlist',
      '3 V1700000000 N5 Gabc\n3 :1000.b.host\n1 W120 :1002.a.host:2,S\n2 :900.c.host\n',
    );
    write(root, 'dovecot-keywords', '0 $Junk\n1 work\n');
    write(root, 'dovecot.index', 'idx');
    write(root, 'subscriptions', 'Sent\n');
    write(root, 'cur/1002.a.host:2,RSa', 'Subject: a\n\nA\n', 1002);
    write(root, 'cur/1000.b.host:2,Fb', 'Subject: b\n\nB\n', 1000);
    write(root, 'cur/900.c.host:2,', 'Subject: c\n\nC\n', 900);
    write(root, 'new/1500.d.host', 'Subject: d\n\nD\n', 1500);
    write(root, 'new/1400.e.host', 'Subject: e\n\nE\n', 1400);
    write(root, 'new/0-empty', '');
    write(root, 'cur/.hidden', 'x');
    write(root, 'tmp/1600.f.host', 'Subject: f\n');
    mkMaildir(root, '.Sent');
    write(root, '.Sent/maildirfolder', '');
    write(root, '.Sent/cur/5.s.host:2,S', 'Subject: s\n\nS\n');
    mkMaildir(root, '.Foo.Bar');
    write(root, '.Foo.Bar/new/7.x.host', 'Subject: x\n\nX\n');
    mkMaildir(root, '.Archive');
    write(root, '.Archive/courierimapuiddb', '1\n');
    write(root, '.Archive/cur/8.y.host:2,T', 'Subject: y\n\nY\n');

    const skipped = [];
    const msgs = await collect(root, {
      onSkip: (p, reason) => skipped.push([path.relative(root, p), reason]),
    });
    expect(msgs.map((m) => [m.mailbox, m.fileName])).toEqual([
      ['INBOX', '1002.a.host:2,RSa'],
      ['INBOX', '900.c.host:2,'],
      ['INBOX', '1000.b.host:2,Fb'],
      ['INBOX', '1400.e.host'],
      ['INBOX', '1500.d.host'],
      ['Archive', '8.y.host:2,T'],
      ['Foo/Bar', '7.x.host'],
      ['Sent', '5.s.host:2,S'],
    ]);
    const a = msgs[0];
    expect(a).toMatchObject({
      dir: 'cur',
      baseName: '1002.a.host',
      flags: ['\\Answered', '\\Seen'],
      keywords: ['$Junk'],
      uid: 1,
      uidValidity: 1700000000,
      size: 14,
    });
    expect(a.raw.toString()).toBe('Subject: a\n\nA\n');
    expect(a.internalDate.getTime()).toBe(1002000);
    expect(a.path).toBe(path.join(root, 'cur', '1002.a.host:2,RSa'));
    expect(msgs[2].keywords).toEqual(['work']);
    expect(msgs[3]).toMatchObject({ dir: 'new', uid: null, uidValidity: 1700000000, flags: [] });
    expect(msgs[5]).toMatchObject({ uid: null, uidValidity: null, flags: ['\\Deleted'] });
    expect(skipped.map((s) => s[0]).sort()).toEqual(
      ['cur/.hidden', 'new/0-empty', 'tmp/1600.f.host'].sort(),
    );
    expect(Object.fromEntries(skipped)['new/0-empty']).toBe('empty file');
  });

  test('uidlist version 1', async () => {
    mkMaildir(root);
    write(root, 'dovecot-uidlist', '1 1111 3\n2 20.a.h\n1 30.b.h:2,S\n');
    write(root, 'cur/20.a.h:2,', 'a');
    write(root, 'cur/30.b.h:2,S', 'b');
    const msgs = await collect(root);
    expect(msgs.map((m) => [m.baseName, m.uid, m.uidValidity])).toEqual([
      ['30.b.h', 1, 1111],
      ['20.a.h', 2, 1111],
    ]);
  });

  test('delivery-time order is numeric, then name', async () => {
    mkMaildir(root);
    write(root, 'new/100.b.h', 'x');
    write(root, 'new/99.z.h', 'x');
    write(root, 'cur/100.a.h:2,S', 'x');
    write(root, 'cur/1000.a.h:2,', 'x');
    const msgs = await collect(root);
    expect(msgs.map((m) => m.fileName)).toEqual([
      '99.z.h',
      '100.a.h:2,S',
      '100.b.h',
      '1000.a.h:2,',
    ]);
  });

  test('plain directory tree of maildirs uses relative paths as mailbox names', async () => {
    mkMaildir(root, 'work');
    mkMaildir(root, 'work/projects/alpha');
    mkMaildir(root, 'archive/2001');
    write(root, 'work/cur/1.a:2,', 'w');
    write(root, 'work/projects/alpha/new/2.b', 'p');
    write(root, 'archive/2001/cur/3.c:2,S', 'a');
    const msgs = await collect(root);
    expect(msgs.map((m) => m.mailbox)).toEqual(['archive/2001', 'work', 'work/projects/alpha']);
  });

  test('startAfter resumes after the key, even if its flags (file name) changed', async () => {
    mkMaildir(root);
    mkMaildir(root, '.B');
    for (const n of [1, 2, 3]) write(root, `cur/${n}.m.h:2,`, 'x');
    for (const n of [4, 5]) write(root, `.B/cur/${n}.m.h:2,`, 'x');
    const all = await collect(root);
    expect(all).toHaveLength(5);
    for (let i = 0; i < all.length; i++) {
      const rest = await collect(root, {
        startAfter: { mailbox: all[i].mailbox, fileName: all[i].fileName },
      });
      expect(rest.map((m) => m.path)).toEqual(all.slice(i + 1).map((m) => m.path));
    }
    const renamed = await collect(root, {
      startAfter: { mailbox: 'INBOX', fileName: '2.m.h:2,RS' },
    });
    expect(renamed.map((m) => m.fileName)).toEqual(['3.m.h:2,', '4.m.h:2,', '5.m.h:2,']);
    const gone = await collect(root, { startAfter: { mailbox: 'A', fileName: 'whatever' } });
    expect(gone.map((m) => m.mailbox)).toEqual(['B', 'B']);
  });
});
