'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { readMh } = require('../lib');
const { parseMhSequences } = require('../lib/mh');

async function collect(root, opts = {}) {
  const out = [];
  for await (const m of readMh(root, opts)) out.push(m);
  return out;
}

function write(root, rel, content) {
  const p = path.join(root, rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, content);
}

describe('readMh', () => {
  let root;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'readers-mh-'));
    for (const n of [10, 2, 1]) write(root, `inbox/${n}`, `Subject: ${n}\n\nbody ${n}\n`);
    write(root, 'inbox/notes.txt', 'not a message');
    write(root, 'inbox/3', '');
    write(root, 'inbox/sub/1', 'Subject: s\n\n');
    write(root, 'inbox-old/5', 'x');
    write(root, 'a/1', 'y');
    write(root, 'top', 'z');
    write(root, '7', 'Subject: root\n\n');
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  test('depth-first folders by name, numeric message order, skips reported', async () => {
    const skipped = [];
    const msgs = await collect(root, {
      onSkip: (p, r) => skipped.push([path.relative(root, p), r]),
    });
    expect(msgs.map((m) => `${m.mailbox}:${m.name}`)).toEqual([
      ':7',
      'a:1',
      'inbox:1',
      'inbox:2',
      'inbox:10',
      'inbox/sub:1',
      'inbox-old:5',
    ]);
    expect(skipped).toEqual([
      ['top', 'not a numbered MH message'],
      ['inbox/notes.txt', 'not a numbered MH message'],
      ['inbox/3', 'empty file'],
    ]);
    const m = msgs[3];
    expect(m.raw.toString()).toBe('Subject: 2\n\nbody 2\n');
    expect(m.size).toBe(m.raw.length);
    expect(m.internalDate).toBeInstanceOf(Date);
    expect(m.internalDate.getTime()).toBe(Math.floor(fs.statSync(m.path).mtimeMs));
    expect(m.path).toBe(path.join(root, 'inbox', '2'));
    expect(m.flags).toEqual([]);
  });

  test('.mh_sequences gives \\Seen to messages not unseen and \\Flagged to flagged', async () => {
    write(root, 'inbox/.mh_sequences', 'unseen: 2-3 10\nflagged: 1\n 10\n');
    const msgs = (await collect(root)).filter((m) => m.mailbox === 'inbox');
    expect(msgs.map((m) => [m.name, m.flags])).toEqual([
      ['1', ['\\Flagged', '\\Seen']],
      ['2', []],
      ['10', ['\\Flagged']],
    ]);
  });

  test('parseMhSequences handles ranges and continuation lines', () => {
    const s = parseMhSequences('unseen: 1-3 7\ncur: 4\nflagged: 2\n  9-10\n');
    expect(s.get('unseen')).toEqual([
      [1, 3],
      [7, 7],
    ]);
    expect(s.get('flagged')).toEqual([
      [2, 2],
      [9, 10],
    ]);
  });

  test('startAfter resumes at every position', async () => {
    const all = await collect(root);
    for (let i = 0; i < all.length; i++) {
      const rest = await collect(root, {
        startAfter: { mailbox: all[i].mailbox, name: all[i].name },
      });
      expect(rest.map((m) => m.path)).toEqual(all.slice(i + 1).map((m) => m.path));
    }
    // A key that no longer exists still resumes at its position.
    const gone = await collect(root, { startAfter: { mailbox: 'inbox', name: '5' } });
    expect(gone.map((m) => `${m.mailbox}:${m.name}`)).toEqual([
      'inbox:10',
      'inbox/sub:1',
      'inbox-old:5',
    ]);
  });
});

test('readMh and readMaildir reject a missing root', async () => {
  const { readMaildir } = require('../lib');
  const missing = path.join(os.tmpdir(), 'readers-does-not-exist-' + process.pid);
  await expect(collect(missing)).rejects.toThrow(/ENOENT/);
  await expect(readMaildir(missing).next()).rejects.toThrow(/ENOENT/);
});
