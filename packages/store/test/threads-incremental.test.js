'use strict';

const path = require('node:path');
const { threadIds } = require('@mailgate/store');
const { deriveRow } = require('@mailgate/importer');
const { useCliSuite } = require('@mailgate/test-support/db');
const { msg, importMessages } = require('@mailgate/test-support/mail');
const { rng } = require('@mailgate/test-support/rng');

/*
 * The incremental thread stage (store thread-ops.js threadBatch) against the full computation
 * (threadIds over every live message of the user, what assignThreads recomputes): imports in
 * small batches where replies arrive before their parents, threads merge across batches and
 * imports, subjects group root sets, copies and id-less messages exist; then APPEND and
 * COPY/MOVE. After each step the stored ids must be exactly the full computation's.
 */
describe('incremental thread stage', () => {
  const ctx = useCliSuite('threads');
  let db;
  let user;

  beforeAll(async () => {
    db = ctx.db;
    user = await db.store.ensureUser('thr');
  });

  /** Stored thread ids and the full computation's, keyed `mailbox/uid`. */
  async function storedAndFull() {
    const r = await db.knex.raw(
      `SELECT mailbox_id, uid, message_id, in_reply_to, refs, subject,
              coalesce(date, internal_date) AS d, thread_id
         FROM messages WHERE user_id = ? AND NOT expunged`,
      [user.id],
    );
    const msgs = r.rows.map((x) => ({
      key: `${x.mailbox_id}/${x.uid}`,
      messageId: x.message_id,
      inReplyTo: x.in_reply_to,
      refs: x.refs,
      subject: x.subject,
      date: x.d,
      stored: x.thread_id,
    }));
    const full = threadIds(msgs);
    return {
      stored: Object.fromEntries(msgs.map((m) => [m.key, m.stored])),
      full: Object.fromEntries(msgs.map((m) => [m.key, full.get(m.key)])),
      threads: new Set(full.values()).size,
      count: msgs.length,
    };
  }

  async function expectFull() {
    const { stored, full, threads, count } = await storedAndFull();
    expect(stored).toEqual(full);
    return { threads, count };
  }

  /** A fixture mailbox: threads of 1-6 messages, shuffled so replies often come first. */
  function fixture(seed, n) {
    const rand = rng(seed);
    const pick = (a) => a[Math.floor(rand() * a.length)];
    const out = [];
    let t = 0;
    while (out.length < n) {
      t++;
      const size = 1 + Math.floor(rand() * 6);
      const subject = pick(['Budget', 'Gas deal', 'Lunch', 'Meeting', `Topic ${t}`, '']);
      const ids = [];
      for (let i = 0; i < size; i++) {
        const id = `<t${seed}-${t}-${i}@x>`;
        const parent = i ? ids[Math.floor(rand() * i)] : null;
        const style = rand();
        const headers = [];
        // Most messages have a Message-ID; some refer by References, some by In-Reply-To,
        // some by nothing but their subject (the subject step), some parents never arrive.
        if (style > 0.08) headers.push(`Message-ID: ${id}`);
        if (parent && style > 0.35) headers.push(`References: ${parent}`);
        else if (parent && style > 0.2) headers.push(`In-Reply-To: ${parent}`);
        if (!parent && style < 0.15) headers.push(`In-Reply-To: <gone-${seed}-${t}@x>`);
        const day = 1 + ((t * 3 + i) % 27);
        const raw = msg({
          subject: i ? `${pick(['Re: ', 'RE: ', 'Fwd: ', ''])}${subject}` : subject,
          date:
            rand() < 0.05 ? null : `${day} Mar 2002 ${String(10 + i).padStart(2, '0')}:00:00 +0000`,
          headers,
          body: `Message ${t}.${i}\n`,
        });
        ids.push(id);
        out.push(raw);
      }
    }
    // Shuffle in windows: replies before parents, threads spread over batches.
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.max(0, i - Math.floor(rand() * 40));
      [out[i], out[j]] = [out[j], out[i]];
    }
    return out.slice(0, n);
  }

  async function importMbox(name, mailbox, messages, batchSize) {
    return importMessages(db.store, path.join(ctx.tmp, name), {
      messages,
      user: 'thr',
      mailbox,
      batchSize,
    });
  }

  test('imports in small batches give the ids of the full computation', async () => {
    const set = fixture(7, 240);
    // The same Message-IDs in two mailboxes (a copy in Sent), several imports, odd batches.
    const a = await importMbox('a.mbox', 'INBOX', set.slice(0, 150), 7);
    expect(a.imported).toBe(150);
    expect(a.threads.assigned).toBeGreaterThanOrEqual(150);
    await expectFull();
    const b = await importMbox('b.mbox', 'Archive', set.slice(150), 11);
    expect(b.imported).toBe(90);
    await expectFull();
    const c = await importMbox('c.mbox', 'Sent', set.slice(40, 100), 13);
    expect(c.imported).toBe(60);
    const { threads, count } = await expectFull();
    expect(count).toBe(300);
    // The fixture really threads: many messages share threads, not one thread each.
    expect(threads).toBeLessThan(count * 0.6);
    expect(threads).toBeGreaterThan(10);
    // Some ids changed after they were first given (a parent arriving later): merges happened
    // and were stamped, and the full recomputation finds nothing left to change.
    const merged = a.threads.merged + b.threads.merged + c.threads.merged;
    expect(merged).toBeGreaterThan(0);
    expect((await db.store.assignThreads(user.id)).updated).toBe(0);
  });

  test('the thread stage reads the threads a batch touches, not the whole mailbox', async () => {
    const r = await importMbox(
      'd.mbox',
      'Other',
      [msg({ subject: 'Unrelated xyzzy', headers: ['Message-ID: <lonely@x>'] })],
      250,
    );
    expect(r.threads).toEqual({ closure: 1, assigned: 1, merged: 0 });
    await expectFull();
  });

  test('APPEND gives a thread id at once, joining and merging threads', async () => {
    const inbox = await db.store.getMailbox(user.id, 'INBOX');
    const raw = (o) => msg({ date: '02 Apr 2002 10:00:00 +0000', ...o });
    const append = (m) =>
      db.store.appendMessage(user.id, inbox.id, { raw: m, row: deriveRow(m).row });
    // Two replies to a parent not stored yet: one thread; then the parent arrives earlier.
    const r1 = await append(
      raw({ subject: 'Re: Draft plan', headers: ['Message-ID: <d1@x>', 'In-Reply-To: <d0@x>'] }),
    );
    const r2 = await append(
      raw({ subject: 'Re: Draft plan', headers: ['Message-ID: <d2@x>', 'References: <d0@x>'] }),
    );
    const idOf = async (uid) =>
      (await db.knex('messages').where({ user_id: user.id, mailbox_id: inbox.id, uid }).first())
        .thread_id;
    expect(await idOf(r1.uid)).toMatch(/^[0-9a-f]{16}$/);
    expect(await idOf(r2.uid)).toBe(await idOf(r1.uid));
    const before = await idOf(r1.uid);
    const r0 = await append(
      msg({
        subject: 'Draft plan',
        date: '01 Apr 2002 09:00:00 +0000',
        headers: ['Message-ID: <d0@x>'],
      }),
    );
    // The parent is the new root: the whole thread takes its id, the replies' change is
    // stamped with a new modseq (clients see it through changesSince).
    expect(await idOf(r0.uid)).toBe(await idOf(r1.uid));
    expect(await idOf(r1.uid)).not.toBe(before);
    const row = await db.knex('messages').where({ mailbox_id: inbox.id, uid: r1.uid }).first();
    expect(Number(row.modseq)).toBeGreaterThan(r2.modseq);
    // A message without Message-ID is threaded by what it refers to.
    const r3 = await append(raw({ subject: 'Re: Draft plan', headers: ['References: <d2@x>'] }));
    expect(await idOf(r3.uid)).toBe(await idOf(r0.uid));
    await expectFull();
  });

  test('COPY and MOVE keep the full computation’s ids (copies share their thread)', async () => {
    const inbox = await db.store.getMailbox(user.id, 'INBOX');
    const archive = await db.store.ensureMailbox(user.id, 'Kept');
    const uids = (
      await db.knex('messages').where({ user_id: user.id, mailbox_id: inbox.id }).pluck('uid')
    ).map(Number);
    const some = uids.filter((u, i) => i % 3 === 0);
    const { map } = await db.store.copyMessages(user.id, inbox.id, some, archive.id);
    expect(map).toHaveLength(some.length);
    await expectFull();
    await db.store.copyMessages(user.id, inbox.id, uids.slice(-5), archive.id, { move: true });
    await expectFull();
    expect((await db.store.assignThreads(user.id)).updated).toBe(0);
  });
});
