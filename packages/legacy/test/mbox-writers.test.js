'use strict';

/*
 * Issue 16: the direct mbox backend next to the other writers on the system. Real dovecot-lda
 * (scripts/dovecot) and real procmail deliver in a loop while flag changes and expunges of 20%
 * run through the API with backend=mbox; afterwards every delivery is there byte for byte (its
 * content: the writers add status headers), every expunged message is gone, every other one is
 * intact. Then: SIGKILL of a mailgate rewrite while dovecot-lda waits to deliver, and the lock
 * interplay (stale locks of either side broken, live ones waited for, MAILBOX_LOCKED over HTTP).
 * Needs root, Dovecot and procmail; outside CI it skips without them, in CI it must run.
 */

const { skipOutsideCI, dovecotMissing } = require('@mailgate/test-support/skip');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const { spawn, spawnSync } = require('node:child_process');
const dovecot = require('@mailgate/dovecot');

const { imapClient } = dovecot;
const { msg, mboxOf } = require('@mailgate/test-support/mail');

process.env.LOG_LEVEL = process.env.LOG_LEVEL || 'error';
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-writers-'));
fs.chmodSync(home, 0o755); // Dovecot's auth process (user dovecot) reads the instance below
process.env.MAILGATE_HOME = home;
process.env.MAILGATE_MBOX_LOCK_WAIT_MS = '4000';
const { addLegacyUser, MboxBackend, lockMailbox } = require('..');
const { readEntries } = require('../lib/mbox');
const { normalized, journalPaths } = require('../lib/mbox-journal');
const { setup, req } = require('../../api/test/helpers');

const procmail = spawnSync('sh', ['-c', 'command -v procmail'], { encoding: 'utf8' }).stdout.trim();
const skipReason = skipOutsideCI(
  __filename,
  dovecotMissing() || (procmail ? null : 'procmail is not installed (apt-get install procmail)'),
);
const d = skipReason ? describe.skip : describe;

let seq = 0;
/** A message with a unique Message-ID and a random body of a few lines. */
function mail(tag) {
  const id = `${tag}.${++seq}@writers.test`;
  const words = crypto.randomBytes(40 + (seq % 7) * 30).toString('base64');
  const body = words.match(/.{1,60}/g).join('\n') + '\n';
  return { id, raw: msg({ subject: `${tag} ${seq}`, headers: [`Message-ID: <${id}>`], body }) };
}

const idOf = (raw) => (/^Message-ID: <([^>]+)>/im.exec(raw.toString('latin1')) || [])[1];
const bare = (id) => (id || '').replace(/^<|>$/g, '');

/** Message-ID → {content: normalized bytes, flags} of every message in the file. */
async function contents(file) {
  const out = new Map();
  for await (const e of readEntries(file)) {
    const id = idOf(e.raw);
    expect(out.has(id)).toBe(false); // nothing duplicated
    out.set(id, { content: normalized(e.raw), flags: e.flags });
  }
  return out;
}

function expectState(found, expected, gone) {
  for (const [id, m] of expected) {
    expect(found.has(id) ? id : `missing ${id}`).toBe(id);
    expect(found.get(id).content.equals(normalized(m.raw))).toBe(true);
  }
  for (const id of gone) expect(found.has(id) ? `still there ${id}` : id).toBe(id);
  expect(found.size).toBe(expected.size);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A pid that is not running on this host (a process that has just exited). */
function deadPid() {
  return spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
    encoding: 'utf8',
  }).stdout.trim();
}

function procmailDeliver(rc, raw) {
  return new Promise((resolve, reject) => {
    const child = spawn(procmail, ['-f', 'sender@example.org', '-m', rc], {
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (b) => (err += b));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`procmail exited ${code}: ${err}`)),
    );
    child.stdin.end(raw);
  });
}

d('mbox next to dovecot-lda and procmail', () => {
  let t;
  let token;
  let inst;
  let inbox;
  const expected = new Map();
  const gone = new Set();
  const stats = { deliveries: 0, expunged: 0, flagged: 0, lockedAnswers: 0 };

  beforeAll(async () => {
    t = await setup();
    token = await t.user('alice');
    const base = Array.from({ length: 40 }, () => mail('base'));
    const src = path.join(home, 'base.mbox');
    fs.writeFileSync(src, mboxOf(base.map((m) => m.raw)));
    inst = await dovecot.start({ format: 'mbox', mail: src, dir: path.join(home, 'dc') });
    inbox = path.join(inst.home, 'mail', 'inbox.mbox');
    addLegacyUser(home, 'alice', { mboxDir: path.dirname(inbox) });
    for (const m of base) expected.set(m.id, m);
  });

  afterAll(async () => {
    if (inst) await inst.stop();
    if (t) await t.close();
    fs.rmSync(home, { recursive: true, force: true });
    console.log(`mbox writers: ${JSON.stringify(stats)}`);
  });

  const api = (method, url, payload) =>
    req(t.app, token, {
      method,
      url: `/api/v1/mailboxes/INBOX/${url}${url.includes('?') ? '&' : '?'}backend=mbox`,
      payload,
    });

  async function currentRows() {
    const rows = [];
    for (let r = (await api('GET', 'messages?limit=1000')).json(); ;) {
      rows.push(...r.messages);
      if (!r.nextCursor) break;
      r = (await api('GET', `messages?limit=1000&cursor=${r.nextCursor}`)).json();
    }
    // Positions are stable while the others only append: pick by uid, check by Message-ID.
    return rows
      .map((r) => ({ uid: r.uid, messageId: bare(r.messageId) }))
      .filter((r) => expected.has(r.messageId));
  }

  /* Flags 10% of the messages \Flagged, or flags 20% \Deleted and expunges them. */
  async function change(kind, salt) {
    const rows = await currentRows();
    const every = kind === 'expunge' ? 5 : 10;
    const picked = rows.filter((_, i) => i % every === salt % every);
    if (!picked.length) return;
    const f = await api('POST', 'flags', {
      uids: picked.map((r) => r.uid),
      add: [kind === 'expunge' ? '\\Deleted' : '\\Flagged'],
    });
    expect(f.statusCode).toBe(200);
    if (kind !== 'expunge') {
      stats.flagged += picked.length;
      return;
    }
    const x = await api('POST', 'expunge', {});
    expect(x.statusCode).toBe(200);
    expect(x.json().expunged).toHaveLength(picked.length);
    for (const v of picked) {
      expected.delete(v.messageId);
      gone.add(v.messageId);
    }
    stats.expunged += picked.length;
  }

  /* One round: `n` deliveries in a loop while 10% are flagged twice and 20% expunged. */
  async function round(n, deliver, file, salt) {
    let delivered = 0;
    const loop = (async () => {
      for (let i = 0; i < n; i++) {
        const m = mail('dlv');
        await deliver(m.raw);
        expected.set(m.id, m);
        stats.deliveries++;
        delivered++;
      }
    })();
    let settled = false;
    loop.then(
      () => (settled = true),
      () => (settled = true),
    ); // awaited below
    for (const [kind, after] of [
      ['flag', 0],
      ['expunge', Math.floor(n / 3)],
      ['flag', Math.floor((2 * n) / 3)],
    ]) {
      while (delivered < after && !settled) await sleep(10);
      await change(kind, salt);
    }
    await loop;
    expectState(await contents(file), expected, gone);
  }

  test('dovecot-lda delivers 104 messages during flag changes and expunges', async () => {
    const ino = fs.statSync(inbox).ino;
    for (let r = 0; r < 4; r++) await round(26, (raw) => dovecot.deliver(inst.dir, raw), inbox, r);
    expect(fs.statSync(inbox).ino).toBe(ino);
    // Every run saved its mail, and Dovecot never took one of our files for a mailbox. (It does
    // log "Next message unexpectedly corrupted" when its index offsets are stale after a rewrite
    // by another program, then resyncs: README.)
    const log = fs.readFileSync(inst.log, 'utf8');
    expect(log.match(/saved mail to INBOX/g)).toHaveLength(stats.deliveries);
    expect(log).not.toMatch(/mailgate/i);
    expect(fs.readdirSync(path.dirname(inbox)).filter((n) => /mailgate/.test(n))).toEqual([]);
  }, 120000);

  test('procmail delivers 104 messages during flag changes and expunges', async () => {
    const dir = path.join(home, 'procmail');
    fs.mkdirSync(dir);
    const file = path.join(dir, 'inbox.mbox');
    const base = Array.from({ length: 30 }, () => mail('pbase'));
    fs.writeFileSync(file, mboxOf(base.map((m) => m.raw)));
    expected.clear();
    gone.clear();
    for (const m of base) expected.set(m.id, m);
    addLegacyUser(home, 'alice', { mboxDir: dir });
    const rc = path.join(dir, '.procmailrc');
    // LOCKSLEEP: procmail's 8 s between dotlock attempts would make the test slow, not different.
    fs.writeFileSync(rc, `DEFAULT=${file}\nLOCKSLEEP=1\nLOGFILE=${dir}/.procmail.log\n`);
    for (let r = 0; r < 4; r++) await round(26, (raw) => procmailDeliver(rc, raw), file, r);
    addLegacyUser(home, 'alice', { mboxDir: path.dirname(inbox) });
  }, 120000);

  test('SIGKILL of a rewrite while dovecot-lda delivers loses neither side', async () => {
    const dir = path.dirname(inbox);
    const big = path.join(dir, 'big');
    const base = Array.from({ length: 1000 }, () => mail('big'));
    // 20% flagged \Deleted in the file already: the killed child expunges them.
    const victims = new Set(base.filter((_, i) => i % 5 === 1).map((m) => m.id));
    const src = Buffer.from(
      mboxOf(
        base.map((m) =>
          victims.has(m.id) ? Buffer.concat([Buffer.from('X-Status: D\n'), m.raw]) : m.raw,
        ),
      ),
    );
    const child = `
      const { MboxBackend } = require(${JSON.stringify(path.resolve(__dirname, '..'))});
      const b = new MboxBackend(process.argv[1]);
      process.stdout.write('go');
      b.expunge('big').then(() => process.stdout.write(' done'));`;
    const outcomes = { old: 0, new: 0 };
    let fullMs = null;
    // Run 0 is not killed: it measures the expunge, over which the kills of runs 1-3 spread.
    for (let run = 0; run < 4; run++) {
      fs.writeFileSync(big, src);
      fs.chownSync(big, dovecot.MAIL_UID, dovecot.MAIL_UID);
      const ino = fs.statSync(big).ino;
      const arrival = mail('arrival');
      const proc = spawn(process.execPath, ['-e', child, dir], {
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      const exited = new Promise((r) => proc.on('exit', r));
      await new Promise((r) => proc.stdout.once('data', r));
      const t0 = Date.now();
      // Even runs: killed at a random instant; odd runs: right after the journal is committed,
      // in the window where the mailbox is cut short and being rewritten.
      const killAt = run % 2 ? fullMs / 4 : Math.floor(Math.random() * fullMs * 1.1);
      if (run && run % 2 === 0) setTimeout(() => proc.kill('SIGKILL'), killAt);
      else if (run) {
        const journal = path.join(dir, '.big.mailgate-journal.lock');
        (function poll() {
          if (fs.existsSync(journal)) proc.kill('SIGKILL');
          else if (proc.exitCode === null && !proc.signalCode) setImmediate(poll);
        })();
      }
      // The delivery starts while the child holds the locks; it waits, then breaks the dead
      // child's dotlock (pid:host) and appends to the same inode.
      await sleep(run ? Math.floor(killAt / 2) : 5);
      await dovecot.deliver(inst.dir, arrival.raw, { mailbox: 'big' });
      await exited;
      if (!run) fullMs = Date.now() - t0;
      const found = new Map();
      for await (const e of new MboxBackend(dir).entries('big')) {
        const id = idOf(e.raw);
        expect(found.has(id)).toBe(false);
        found.set(id, normalized(e.raw));
      }
      expect(fs.statSync(big).ino).toBe(ino);
      expect(found.get(arrival.id).equals(normalized(arrival.raw))).toBe(true);
      const state = found.has([...victims][0]) ? 'old' : 'new';
      outcomes[state]++;
      for (const m of base) {
        if (state === 'new' && victims.has(m.id)) expect(found.has(m.id)).toBe(false);
        else expect(found.get(m.id).equals(normalized(m.raw))).toBe(true);
      }
      // Anything else in the file is named, with its start, before the count is checked.
      const known = new Set([...base.map((m) => m.id), arrival.id]);
      const strays = [...found].filter(([id]) => !known.has(id));
      expect(
        strays.map(([id, raw]) => ({ run, state, id, start: raw.subarray(0, 300).toString() })),
      ).toEqual([]);
      expect(found.size).toBe(base.length + 1 - (state === 'new' ? victims.size : 0));
      // A kill inside the dotlock step leaves its temporary until the next writer removes it
      // (lock.js cleanDotlockTemps; readers do not, as they may not be on this host): one
      // write lock taken and released, then nothing of mailgate's is left.
      await (await lockMailbox(big, { timeoutMs: 4000 })).release();
      expect(fs.readdirSync(dir).filter((n) => /mailgate/.test(n))).toEqual([]);
    }
    console.log(`kill during delivery (expunge ${fullMs} ms): ${JSON.stringify(outcomes)}`);
  });

  test('a rewrite cut at any byte of its first message, alone or then a dovecot-lda delivery: recovery keeps exactly the mail', async () => {
    // The SIGKILL test above lands on a random byte. This one walks the cut over the first
    // rewritten message (From_ line, headers, body) and into the next From_ line: every byte
    // with recovery alone, and with a dovecot-lda delivery before recovery (Dovecot ends the cut
    // line, may add its status headers, and appends without an empty line before its From_
    // line) the first, second and last bytes of every line. A delivery costs ~1 s here (Dovecot
    // resyncs the rewritten file), so not every byte.
    const dir = path.dirname(inbox);
    const file = path.join(dir, 'cut');
    const base = Array.from({ length: 12 }, () => mail('cut'));
    const victims = new Set([base[3].id, base[7].id]);
    const src = Buffer.from(
      mboxOf(
        base.map((m) =>
          victims.has(m.id) ? Buffer.concat([Buffer.from('X-Status: D\n'), m.raw]) : m.raw,
        ),
      ),
    );
    // One whole expunge, its committed journal kept before the rewrite unlinks it.
    fs.writeFileSync(file, src);
    const { journal } = journalPaths(file);
    let saved = null;
    const unlink = fs.promises.unlink;
    const spy = jest.spyOn(fs.promises, 'unlink').mockImplementation(async (p) => {
      if (p === journal) saved = fs.readFileSync(journal);
      return unlink(p);
    });
    try {
      await new MboxBackend(dir).expunge('cut');
    } finally {
      spy.mockRestore();
    }
    expect(saved).not.toBeNull();
    const done = fs.readFileSync(file);
    // The rewrite's start: the From_ line of the first message where the two files differ.
    let at = 0;
    while (at < done.length && done[at] === src[at]) at++;
    const start = src.lastIndexOf('From ', at);
    const next = done.indexOf('\nFrom ', start + 1) + 1;
    const lineEnd = done.indexOf('\n', next);
    const survivors = base.filter((m) => !victims.has(m.id));
    const every = [];
    for (let c = start + 1; c <= lineEnd + 1; c++) every.push(c);
    const withDelivery = new Set();
    for (let ls = start; ls < lineEnd; ls = done.indexOf('\n', ls) + 1) {
      const le = done.indexOf('\n', ls);
      for (const c of [ls + 1, ls + 2, le, le + 1])
        if (c > start && c <= lineEnd + 1) withDelivery.add(c);
    }
    const failures = [];
    async function check(cut, deliver) {
      fs.writeFileSync(file, done.subarray(0, cut));
      fs.writeFileSync(journal, saved);
      fs.chownSync(file, dovecot.MAIL_UID, dovecot.MAIL_UID);
      const want = [...survivors];
      if (deliver) {
        const arrival = mail('arrival');
        await dovecot.deliver(inst.dir, arrival.raw, { mailbox: 'cut' });
        want.push(arrival);
      }
      const found = [];
      for await (const e of new MboxBackend(dir).entries('cut'))
        found.push([idOf(e.raw), normalized(e.raw)]);
      const ids = found.map(([id]) => id);
      const ok =
        found.length === want.length &&
        want.every((m) => {
          const f = found.find(([id]) => id === m.id);
          return f && f[1].equals(normalized(m.raw));
        });
      if (!ok) {
        failures.push({
          cut: cut - start,
          deliver,
          ids,
          tails: found
            .filter(([id]) => !want.some((m) => m.id === id))
            .map(([, r]) => r.toString('latin1', Math.max(0, r.length - 120))),
        });
      }
      expect(fs.readdirSync(dir).filter((n) => /mailgate/.test(n))).toEqual([]);
    }
    for (const cut of every) await check(cut, false);
    for (const cut of withDelivery) await check(cut, true);
    expect(failures.slice(0, 5)).toEqual([]);
    expect(withDelivery.size).toBeGreaterThan(20);
    console.log(`cuts: ${every.length} alone, ${withDelivery.size} with a delivery`);
  });

  test('lock interop: stale locks of either side are broken, live ones waited for', async () => {
    const lockPath = `${inbox}.lock`;
    const host = os.hostname();
    // A dead Dovecot's lock ("pid:host", Dovecot's own format) is broken by mailgate at once.
    fs.writeFileSync(lockPath, `${deadPid()}:${host}`);
    // Broken, not waited for: a lock that is waited for and never goes away ends in
    // MAILBOX_LOCKED (below), so a 200 with the lock file gone is the proof (issue 30.5: no
    // stopwatch).
    const r = await api('POST', 'flags', { uids: [1], add: ['$Interop'] });
    expect(r.statusCode).toBe(200);
    expect(fs.existsSync(lockPath)).toBe(false);

    // A killed mailgate's lock is broken by dovecot-lda (it reads the dead pid of "pid:host"),
    // not waited out until its 2-minute mbox_dotlock_change_timeout makes the lock stale. No
    // stopwatch (issue 30.5): the delivery runs with an mbox_lock_timeout (30 s) below that
    // change timeout, so a lock Dovecot could not break fails the delivery (exit 75) instead of
    // letting it through late.
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `require(${JSON.stringify(path.resolve(__dirname, '..'))})
          .lockMailbox(process.argv[1]).then(() => process.stdout.write('held'));
         setInterval(() => {}, 1000);`,
        inbox,
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    await new Promise((res) => holder.stdout.once('data', res));
    expect(fs.readFileSync(lockPath, 'latin1')).toBe(`${holder.pid}:${host}`);
    holder.kill('SIGKILL');
    await new Promise((res) => holder.on('exit', res));
    const m1 = mail('interop');
    await dovecot.deliver(inst.dir, m1.raw, { settings: { mbox_lock_timeout: '30s' } });
    expect(fs.existsSync(lockPath)).toBe(false);

    // A live mailgate lock is waited for by dovecot-lda.
    const held = await lockMailbox(inbox);
    const m2 = mail('interop');
    let t0 = Date.now();
    const delivery = dovecot.deliver(inst.dir, m2.raw);
    await sleep(1500);
    await held.release();
    await delivery;
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1400);

    // A live lock of another writer is waited for by mailgate...
    const sleeper = spawn('sleep', ['30']);
    fs.writeFileSync(lockPath, `${sleeper.pid}:${host}`);
    t0 = Date.now();
    setTimeout(() => fs.rmSync(lockPath, { force: true }), 1500);
    const w = await api('POST', 'flags', { uids: [1], add: ['$Waited'] });
    expect(w.statusCode).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1400);

    // ...and one held beyond the wait answers MAILBOX_LOCKED (MAILGATE_MBOX_LOCK_WAIT_MS, 4 s
    // here, below the request timeout): only the lock wait giving up answers that code, so the
    // code is the proof that the wait is bounded, and the time it took is only bounded below.
    fs.writeFileSync(lockPath, `${sleeper.pid}:${host}`);
    t0 = Date.now();
    const locked = await api('POST', 'flags', { uids: [1], add: ['$Never'] });
    const waited = Date.now() - t0;
    const stillHeld = fs.readFileSync(lockPath, 'latin1');
    sleeper.kill();
    fs.rmSync(lockPath, { force: true });
    expect(locked.statusCode).toBe(503);
    expect(locked.json().error.code).toBe('MAILBOX_LOCKED');
    expect(locked.json().error.message).not.toContain(inbox); // no path in the answer
    expect(stillHeld).toBe(`${sleeper.pid}:${host}`); // refused while held, never broken
    expect(waited).toBeGreaterThanOrEqual(3900);
    stats.lockedAnswers++;

    const found = await contents(inbox);
    expect(found.get(m1.id).content.equals(normalized(m1.raw))).toBe(true);
    expect(found.get(m2.id).content.equals(normalized(m2.raw))).toBe(true);
  });

  test('temporary files: Dovecot does not list them, the next open removes them', async () => {
    const dir = path.dirname(inbox);
    // What a writer killed while writing its journal leaves (and what mailgate before the
    // in-place rewrite left after a crash).
    const left = ['.inbox.mbox.mailgate-journal-new.lock', '.inbox.mbox.mailgate-new'];
    for (const f of left)
      fs.writeFileSync(path.join(dir, f), 'From x Mon Jan  1 00:00:00 2001\n\n');
    const client = await imapClient(inst);
    const names = (await client.list()).map((b) => b.path);
    await client.logout();
    // Dovecot lists dot-files (the old temporary name shows up as a mailbox), but not *.lock.
    expect(names).toEqual(expect.arrayContaining(['INBOX', '.inbox.mbox.mailgate-new']));
    expect(names.filter((n) => /mailgate-journal/.test(n))).toEqual([]);
    const r = await api('GET', 'messages?limit=1');
    expect(r.statusCode).toBe(200);
    expect(fs.readdirSync(dir).filter((f) => /mailgate/.test(f))).toEqual([]);
  });

  test('a file that is not an mbox is skipped, with a reason logged (17.6)', async () => {
    const notes = path.join(path.dirname(inbox), 'notes.txt');
    fs.writeFileSync(notes, 'shopping list\nmilk\n');
    const one = await req(t.app, token, {
      url: '/api/v1/mailboxes/notes.txt/messages?backend=mbox',
    });
    expect(one.statusCode).toBe(404);
    expect(one.json().error.code).toBe('MAILBOX_NOT_FOUND');
    const s = await req(t.app, token, { url: '/api/v1/search?backend=mbox&q=subject:base' });
    expect(s.statusCode).toBe(200);
    expect(s.json().total).toBeGreaterThan(0);
    fs.rmSync(notes);
  });
});
