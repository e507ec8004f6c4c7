'use strict';

/*
 * Crash safety of the direct mbox backend's in-place rewrite (issues 5 and 16): an expunge
 * killed with SIGKILL at random points must leave a mailbox that, once the next open has
 * recovered it from the journal, holds either every original message or exactly the
 * non-expunged ones, in the same inode. Also: the stale locks of a killed writer are broken, and
 * two concurrent writers never lose each other's changes.
 */

const { skipNotice } = require('@mailgate/test-support/skip');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { corpusDir } = require('@mailgate/test-support/corpus');
const { buildLegacyMail, messageKey } = require('@mailgate/test-support/legacy-corpus');
const { MboxBackend } = require('..');
const { readEntries } = require('../lib/mbox');

// Stale-lock and recovery warnings are expected here by the dozen.
process.env.LOG_LEVEL = process.env.LOG_LEVEL || 'error';

const dir = corpusDir();
const d = dir ? describe : describe.skip;
if (!dir) skipNotice(__filename, 'the shared corpus (../shared/corpus) is not beside the checkout');

const CHILD = `
const { MboxBackend } = require(${JSON.stringify(path.resolve(__dirname, '..'))});
const b = new MboxBackend(process.argv[1]);
process.stdout.write('go\\n'); // start-up done: the kill window is the expunge itself
b.expunge('INBOX').then(() => process.stdout.write('done'));
`;

async function keysOf(file) {
  const keys = [];
  for await (const e of readEntries(file)) keys.push(messageKey(e.raw, null));
  return keys;
}

// What a reader sees: the backend's open recovers a killed rewrite first.
async function openedKeys(dir) {
  const keys = [];
  for await (const e of new MboxBackend(dir).entries('INBOX')) keys.push(messageKey(e.raw, null));
  return keys;
}

d('mbox rewrite under SIGKILL', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-crash-'));
  let base;
  let all;
  let survivors;
  let fullMs;
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  beforeAll(async () => {
    const built = buildLegacyMail(path.join(dir, 'enron', 'maildir'), 1500, path.join(tmp, 'src'));
    const b = new MboxBackend(built.mboxDir);
    const n = built.count;
    await b.setFlags('INBOX', {
      uids: Array.from({ length: n }, (_, i) => i + 1).filter((u) => u % 10 === 3),
      add: ['\\Deleted'],
    });
    base = built.mbox;
    all = await keysOf(base);
    const flagged = new Set();
    for await (const e of readEntries(base)) if (e.flags.includes('\\Deleted')) flagged.add(e.uid);
    survivors = all.filter((_, i) => !flagged.has(i + 1));
    expect(survivors.length).toBeLessThan(all.length);
    // One uninterrupted run gives the window the kills are spread over.
    const work = path.join(tmp, 'full');
    fs.mkdirSync(work);
    fs.copyFileSync(base, path.join(work, 'inbox.mbox'));
    fullMs = (await runChild(work, null)).ms;
    expect(await keysOf(path.join(work, 'inbox.mbox'))).toEqual(survivors);
  });

  function runChild(work, killAfterMs) {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, ['-e', CHILD, work], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let timer = null;
      let t0 = null;
      child.stdout.once('data', () => {
        t0 = Date.now();
        if (killAfterMs != null) timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
      });
      child.on('exit', (code, signal) => {
        clearTimeout(timer);
        resolve({ code, signal, ms: Date.now() - t0 });
      });
    });
  }

  test('12 expunges killed at random points leave the old or the new mailbox', async () => {
    const outcomes = { old: 0, new: 0, recovered: 0 };
    for (let run = 0; run < 12; run++) {
      const work = path.join(tmp, `run${run}`);
      fs.mkdirSync(work);
      fs.copyFileSync(base, path.join(work, 'inbox.mbox'));
      // Spread over the expunge (read, journal, truncate, append), a few kills past the end.
      const ino = fs.statSync(path.join(work, 'inbox.mbox')).ino;
      await runChild(work, Math.floor(Math.random() * fullMs * 1.1));
      if (fs.readdirSync(work).some((n) => n.includes('mailgate-journal'))) outcomes.recovered++;
      const keys = await openedKeys(work);
      expect(fs.statSync(path.join(work, 'inbox.mbox')).ino).toBe(ino);
      // A kill between writing the dotlock's temporary and unlinking it (a few µs) leaves the
      // temporary: harmless (it ends in .lock, no reader lists it), removed by the next writer
      // (lib/lock.js cleanDotlockTemps), checked below. Nothing else of ours may remain.
      const temp = /^\.inbox\.mbox\.lock\.mailgate-dotlock-\d+-[0-9a-f]+-[A-Za-z0-9._]+\.lock$/;
      expect(fs.readdirSync(work).filter((n) => n.includes('mailgate') && !temp.test(n))).toEqual(
        [],
      );
      const state =
        JSON.stringify(keys) === JSON.stringify(all)
          ? 'old'
          : JSON.stringify(keys) === JSON.stringify(survivors)
            ? 'new'
            : 'damaged';
      expect(state).not.toBe('damaged');
      outcomes[state]++;
      // A killed writer's dotlock (dead pid) must not block the next one for ever.
      const r = await new MboxBackend(work).expunge('INBOX');
      expect(r.expunged.length).toBe(state === 'old' ? all.length - survivors.length : 0);
      expect(await keysOf(path.join(work, 'inbox.mbox'))).toEqual(survivors);
      expect(fs.existsSync(path.join(work, 'inbox.mbox.lock'))).toBe(false);
      expect(fs.readdirSync(work).filter((n) => n.includes('mailgate'))).toEqual([]);
      fs.rmSync(work, { recursive: true, force: true });
    }
    console.log(`mbox crash runs (full run ${fullMs} ms): ${JSON.stringify(outcomes)}`);
  });

  test('two concurrent writers keep both changes (the locks serialise them)', async () => {
    const work = path.join(tmp, 'concurrent');
    fs.mkdirSync(work);
    fs.copyFileSync(base, path.join(work, 'inbox.mbox'));
    const a = new MboxBackend(work);
    const b = new MboxBackend(work);
    await Promise.all([
      a.setFlags('INBOX', { uids: [1, 2], add: ['\\Flagged'] }),
      b.setFlags('INBOX', { uids: [2, 4], add: ['\\Seen', 'Later'] }),
    ]);
    const rows = (await a.scanHeaders('INBOX')).filter((r) => [1, 2, 4].includes(r.uid));
    expect(rows.map((r) => [r.uid, r.flags, r.keywords])).toEqual([
      [1, ['\\Flagged'], []],
      [2, ['\\Flagged', '\\Seen'], ['Later']],
      [4, ['\\Seen'], ['Later']],
    ]);
  });
});
