'use strict';

/*
 * Issue 16 without external programs: the lock rules (dotlock owner formats, stale and live
 * locks, writers and readers excluding each other inside one process) and the journal's
 * recovery from every kind of cut-short rewrite, with mail appended and status headers
 * rewritten by "another writer" before the recovery runs.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { MboxBackend, lockMailbox, readLock } = require('..');
const { lockOwner } = require('../lib/lock');
const { normalized, journalPaths } = require('../lib/mbox-journal');
const { readEntries } = require('../lib/mbox');
const { msg, mboxOf } = require('@mailgate/test-support/mail');

process.env.LOG_LEVEL = process.env.LOG_LEVEL || 'error';
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-lock-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

let n = 0;
// A valid From_ line in a body, after a non-empty line: readers keep it in the message.
const BODY_FROM = 'From bob@x.org Sat Jan  3 01:05:34 1996';

/** unquoted: message 5's body has BODY_FROM unquoted in the file (a writer that did not quote). */
function mailbox(count, { unquoted = false } = {}) {
  const dir = fs.mkdtempSync(path.join(tmp, 'mb-'));
  const messages = Array.from({ length: count }, (_, i) =>
    msg({
      subject: `m${i}`,
      headers: [`Message-ID: <m${i}.${++n}@lock.test>`],
      body: `body ${i}\n${'x'.repeat(40 + i)}\n${unquoted && i === 5 ? `${BODY_FROM}\nmore text\nand more\n` : ''}`,
    }),
  );
  const file = path.join(dir, 'inbox.mbox');
  fs.writeFileSync(
    file,
    mboxOf(messages).toString('latin1').replace(`>${BODY_FROM}`, BODY_FROM),
    'latin1',
  );
  return { dir, file, messages };
}

const idOf = (raw) => /^Message-ID: <([^>]+)>/im.exec(raw.toString('latin1'))[1];

async function ids(file) {
  const out = [];
  for await (const e of readEntries(file)) out.push(idOf(e.raw));
  return out;
}

function deadPid() {
  return Number(
    spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    }).stdout,
  );
}

test('dotlock owners in every format the writers use', () => {
  expect(lockOwner('123:vm')).toEqual({ pid: 123, host: 'vm' });
  expect(lockOwner('123 vm\n')).toEqual({ pid: 123, host: 'vm' });
  expect(lockOwner('123\n')).toEqual({ pid: 123, host: null });
  expect(lockOwner('')).toBeNull(); // procmail
  expect(lockOwner('0')).toBeNull();
});

test('the lock holds pid:host; a second writer in the same process waits, then MAILBOX_LOCKED', async () => {
  const { file } = mailbox(2);
  const held = await lockMailbox(file);
  expect(fs.readFileSync(`${file}.lock`, 'latin1')).toBe(`${process.pid}:${os.hostname()}`);
  await expect(lockMailbox(file, { timeoutMs: 200, name: 'INBOX' })).rejects.toMatchObject({
    code: 'MAILBOX_LOCKED',
  });
  // Readers wait for the writer too (shared against exclusive fcntl lock).
  await expect(readLock(file, { timeoutMs: 200 })).rejects.toMatchObject({
    code: 'MAILBOX_LOCKED',
  });
  const later = lockMailbox(file, { timeoutMs: 2000 });
  setTimeout(() => held.release(), 100);
  await (await later).release();
  expect(fs.existsSync(`${file}.lock`)).toBe(false);
});

test('stale dotlocks are broken, live and fresh foreign ones respected', async () => {
  const { file } = mailbox(2);
  const lock = `${file}.lock`;
  for (const text of [`${deadPid()}:${os.hostname()}`, `${deadPid()} ${os.hostname()}`]) {
    fs.writeFileSync(lock, text);
    await (await lockMailbox(file, { timeoutMs: 1000 })).release();
  }
  // Another host's lock cannot be checked by pid: only its age breaks it.
  fs.writeFileSync(lock, '1:elsewhere');
  await expect(lockMailbox(file, { timeoutMs: 150 })).rejects.toMatchObject({
    code: 'MAILBOX_LOCKED',
  });
  const old = new Date(Date.now() - 10 * 60 * 1000);
  fs.utimesSync(lock, old, old);
  await (await lockMailbox(file, { timeoutMs: 1000 })).release();
  // An empty (procmail) lock likewise; a live local pid is never broken.
  fs.writeFileSync(lock, `${process.ppid}:${os.hostname()}`);
  await expect(lockMailbox(file, { timeoutMs: 150 })).rejects.toMatchObject({
    code: 'MAILBOX_LOCKED',
  });
  fs.rmSync(lock);
});

test('a request waiting beyond lockWaitMs gets MAILBOX_LOCKED naming the mailbox only', async () => {
  const { dir, file } = mailbox(3);
  const held = await lockMailbox(file);
  const b = new MboxBackend(dir, { lockWaitMs: 150 });
  const err = await b.setFlags('INBOX', { uids: [1], add: ['\\Seen'] }).catch((e) => e);
  await held.release();
  expect(err.code).toBe('MAILBOX_LOCKED');
  expect(err.message).toContain('INBOX');
  expect(err.message).not.toContain(dir);
});

/*
 * A rewrite "killed" right after its journal was committed (ftruncate fails), then the mailbox
 * left in each state a kill can leave it in, with an arrival appended by another writer and a
 * prefix message's status headers rewritten. The next open must give the journal's messages plus
 * the arrival, nothing twice, nothing lost.
 */
const CUTS = [
  ['untouched (killed before the truncate)', () => null],
  ['truncated at the first change', () => 0],
  ['cut inside the first From_ line', () => 3],
  ['cut inside a From_ line', (tail) => tail.indexOf('From ', 10) + 3],
  ['cut inside a header', (tail) => tail.indexOf('Subject:', 10) + 4],
  ['cut inside a body', (tail) => tail.indexOf('body', 10) + 20],
  ['complete (killed before the unlink)', (tail) => tail.length],
];
// How the other writer separates its delivery: Dovecot ends a cut-short line and writes its
// From_ line right after it, without an empty line; procmail-like writers add one.
test.each([
  ...CUTS.map(([name, cut]) => [name, 'an empty line', cut, true]),
  ...CUTS.map(([name, cut]) => [name, 'the line end only', cut, false]),
  // A message of ours with an unquoted From_ line stays one message (only entries that are
  // none of ours are split again at any line start).
  ...CUTS.slice(-2).map(([name, cut]) => [
    `${name}, a body with an unquoted From_ line`,
    'the line end only',
    cut,
    false,
    true,
  ]),
])(
  'recovery when the mailbox was %s, the arrival after %s',
  async (_, _sep, cutAt, blank, unquoted = false) => {
    const { dir, file, messages } = mailbox(12, { unquoted });
    const b = new MboxBackend(dir);
    await b.setFlags('INBOX', { uids: [5, 8, 9], add: ['\\Deleted'] });
    const before = await ids(file);
    const ftruncate = jest.spyOn(fs, 'ftruncateSync').mockImplementationOnce(() => {
      throw new Error('killed');
    });
    await expect(b.expunge('INBOX')).rejects.toThrow('killed');
    ftruncate.mockRestore();
    const { journal } = journalPaths(file);
    const j = fs.readFileSync(journal);
    const trailer = JSON.parse(j.toString('latin1').split('\n').slice(-3)[0]);
    const tail = j.subarray(0, trailer.bodyLength);
    expect(fs.readFileSync(file).length).toBeGreaterThan(trailer.start); // the old file

    const k = cutAt(tail.toString('latin1'));
    if (k !== null) {
      fs.truncateSync(file, trailer.start);
      fs.appendFileSync(file, tail.subarray(0, k));
    }
    // Another writer (Dovecot) broke the stale lock: it added X-UID to the first message and
    // appended a delivery.
    const whole = fs.readFileSync(file, 'latin1');
    const munged = whole.replace(/^(Subject: m0\n)/m, '$1X-UID: 1\n');
    const arrival = msg({ subject: 'arrival', headers: ['Message-ID: <arrival@lock.test>'] });
    let sep = munged.endsWith('\n') ? '' : '\n';
    if (blank && !(munged + sep).endsWith('\n\n')) sep += '\n';
    fs.writeFileSync(
      file,
      Buffer.concat([
        Buffer.from(munged + sep, 'latin1'),
        Buffer.from('From sender@example.org  Mon Nov 23 14:39:13 2026\n'),
        arrival,
        Buffer.from('\n'),
      ]),
    );
    const ino = fs.statSync(file).ino;

    const after = [];
    const found = new Map();
    for await (const e of b.entries('INBOX')) {
      after.push(idOf(e.raw));
      found.set(idOf(e.raw), e.raw);
    }
    const survivors = before.filter((_, i) => ![4, 7, 8].includes(i));
    expect(after).toEqual([...survivors, 'arrival@lock.test']);
    for (const m of messages) {
      const id = idOf(m);
      if (found.has(id)) expect(normalized(found.get(id)).equals(normalized(m))).toBe(true);
    }
    expect(normalized(found.get('arrival@lock.test')).equals(normalized(arrival))).toBe(true);
    expect(fs.statSync(file).ino).toBe(ino);
    expect(fs.readdirSync(dir).filter((f) => f.includes('mailgate'))).toEqual([]);
    expect(fs.existsSync(`${file}.lock`)).toBe(false);
  },
);

test('the dotlock is linked from a written temporary: a killed writer leaves no empty lock, and its temporary is cleaned', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-dotlock-'));
  try {
    const file = path.join(dir, 'inbox.mbox');
    fs.writeFileSync(file, mboxOf([msg({ subject: 'one' })]));
    // A writer killed between writing its temporary and removing it (dead pid).
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    }).stdout;
    const left = path.join(dir, `.inbox.mbox.lock.mailgate-dotlock-${dead}-0badf00d.lock`);
    fs.writeFileSync(left, `${dead}:${os.hostname()}`);
    // The same, named with this host (today's names), and one of another host: that pid may
    // be a live writer there (NFS), so it is not this host's to remove.
    const tag = os
      .hostname()
      .replace(/[^A-Za-z0-9.]/g, '_')
      .slice(0, 64);
    const here = path.join(dir, `.inbox.mbox.lock.mailgate-dotlock-${dead}-0badf00e-${tag}.lock`);
    const there = `.inbox.mbox.lock.mailgate-dotlock-${dead}-0badf00f-other.host.lock`;
    fs.writeFileSync(here, `${dead}:${os.hostname()}`);
    fs.writeFileSync(path.join(dir, there), `${dead}:other.host`);
    const lock = await lockMailbox(file, { timeoutMs: 2000 });
    // Held: the lock has its owner from the first byte it existed under its name.
    expect(fs.readFileSync(`${file}.lock`, 'latin1')).toBe(`${process.pid}:${os.hostname()}`);
    await lock.release();
    expect(fs.readdirSync(dir).sort()).toEqual([there, 'inbox.mbox']);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/*
 * Recovery edge cases, on the journal module directly: a rewrite killed right after its
 * journal was committed, the file then changed as a crash and another writer leave it, then
 * recover(). Each case names what must survive.
 */
describe('recovery keeps exactly the mail in unusual files', () => {
  const J = require('../lib/mbox-journal');
  const quiet = { warn() {}, error() {} };
  const m = (i, body) =>
    `From a@b Mon Jan  1 00:00:0${i} 2024\nFrom: x\nSubject: m${i}\nMessage-ID: <m${i}>\n\n${body}\n\n`;
  const BF = 'From bob@x.org Sat Jan  3 01:05:34 1996';
  const ARRIVAL = (s) =>
    `From MAILER-DAEMON Tue Feb  2 00:00:00 2024\nFrom: y\nSubject: ${s}\n\nbody\n`;

  async function crash(content, drop, mutate) {
    const dir = fs.mkdtempSync(path.join(tmp, 'rc-'));
    const file = path.join(dir, 'mb');
    fs.writeFileSync(file, content, 'latin1');
    const fd = fs.openSync(file, 'r+');
    const ftruncate = jest.spyOn(fs, 'ftruncateSync').mockImplementationOnce(() => {
      throw new Error('killed');
    });
    await expect(J.rewriteInPlace(file, fd, (e) => (e.index === drop ? null : e))).rejects.toThrow(
      'killed',
    );
    ftruncate.mockRestore();
    const j = fs.readFileSync(J.journalPaths(file).journal);
    const trailer = JSON.parse(j.toString('latin1').split('\n').slice(-3)[0]);
    const tail = j.subarray(0, trailer.bodyLength).toString('latin1');
    const next = mutate(fs.readFileSync(file, 'latin1'), tail, trailer.start);
    fs.ftruncateSync(fd, 0);
    fs.writeSync(fd, Buffer.from(next, 'latin1'), 0, Buffer.byteLength(next, 'latin1'), 0);
    await J.recover(file, fd, quiet);
    fs.closeSync(fd);
    const subjects = [];
    for await (const e of readEntries(file)) {
      const raw = e.raw.toString('latin1');
      subjects.push((/^Subject: (.*)$/m.exec(raw) || [null, JSON.stringify(raw)])[1]);
    }
    return { subjects, text: fs.readFileSync(file, 'latin1') };
  }

  test('a kept message whose last line is the start of a From_ line keeps it', async () => {
    const content = m(0, 'hello') + m(1, 'Thanks,\n\nF') + m(2, 'two') + m(3, 'three');
    const r = await crash(content, 2, (cur) => cur);
    expect(r.subjects).toEqual(['m0', 'm1', 'm3']);
    expect(r.text).toContain('Thanks,\n\nF\n\nFrom a@b');
    // and when the cut is in the first new From_ line, only the cut is dropped
    const r2 = await crash(
      content,
      2,
      (cur, tail, start) => cur.slice(0, start) + tail.slice(0, 2),
    );
    expect(r2.subjects).toEqual(['m0', 'm1', 'm3']);
    expect(r2.text).toContain('Thanks,\n\nF\n\nFrom a@b');
  });

  test.each([false, true])(
    'a cut after an unquoted From_ line in one of our messages (arrival after it: %s)',
    async (arrival) => {
      const content =
        m(0, 'hello') +
        m(1, 'one') +
        m(2, 'two') +
        m(3, `three\n${BF}\nmore text\nand more`) +
        m(4, 'four');
      const r = await crash(content, 2, (cur, tail, start) => {
        const s = cur.slice(0, start) + tail.slice(0, tail.indexOf('and more') + 3);
        return arrival ? `${s}\n${ARRIVAL('arr')}` : s;
      });
      expect(r.subjects).toEqual(['m0', 'm1', 'm3', 'm4', ...(arrival ? ['arr'] : [])]);
      expect(r.text).toContain(`three\n${BF}\nmore text\nand more\n`);
    },
  );

  test('two deliveries after a cut line, each written with its own empty line', async () => {
    const content = m(0, 'hello') + m(1, 'one') + m(2, 'two') + m(3, 'three');
    const r = await crash(
      content,
      1,
      (cur, tail, start) =>
        `${cur.slice(0, start)}${tail.slice(0, tail.indexOf('two') + 1)}\n${ARRIVAL('a1')}${ARRIVAL('a2')}`,
    );
    expect(r.subjects).toEqual(['m0', 'm2', 'm3', 'a1', 'a2']);
  });

  test('mboxcl2 without empty lines between messages, cut in the first new From_ line', async () => {
    const c = (i, body) =>
      `From a@b Mon Jan  1 00:00:0${i} 2024\nFrom: x\nSubject: m${i}\nContent-Length: ${body.length}\n\n${body}`;
    const content = c(0, 'zero\n') + c(1, 'one\n') + c(2, 'two\n') + c(3, 'three\n');
    const r = await crash(content, 2, (cur, tail, start) => cur.slice(0, start) + tail.slice(0, 3));
    expect(r.subjects).toEqual(['m0', 'm1', 'm3']);
    expect(r.text).toContain('one\nFrom a@b Mon Jan  1 00:00:03 2024\n');
  });

  test('data before the first message, the first message dropped, cut in the next From_ line', async () => {
    const content = `junk line\n${m(0, 'a')}${m(1, 'b')}`;
    const r = await crash(content, 0, (cur, tail, start) => cur.slice(0, start) + tail.slice(0, 3));
    expect(r.text).toBe(`junk line\n${m(1, 'b')}`);
    expect(r.subjects).toEqual(['m1']);
  });
});
