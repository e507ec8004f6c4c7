'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { PgStore, byName } = require('@mailgate/store');
const { runImport } = require('@mailgate/importer');
const { createTestDatabase } = require('@mailgate/test-support/db');
const { msg, mboxOf } = require('@mailgate/test-support/mail');
const { singlePostgresOnly } = require('@mailgate/test-support/skip');

// On Citus the read stays unprepared (store lib/citus.js point 8): only the answers are checked.
const prepared = singlePostgresOnly(
  __filename,
  "prepared reads name the user's own partition",
  'plan counts',
)
  ? test.skip
  : test;

/*
 * IMAP FETCH's read of message bytes (sourcesWithMailbox `hidden`: the first fetch of a message)
 * as a prepared read (lib/prepared-reads.js, issue 35.4): PostgreSQL plans it once per
 * connection (a generic plan, kept) instead of once per call, and the answer is the one the
 * unprepared statement gives (bytes, the mailbox row, hidden rows included, MAILBOX_NOT_FOUND).
 * Counted from PostgreSQL's own pg_prepared_statements, never timed.
 */
describe('prepared reads: the first FETCH of a message is not planned again', () => {
  let db;
  let tmp;
  let store;
  let user;
  let other;
  const N = 12;

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new PgStore(db.knex);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-prep-'));
    const file = path.join(tmp, 'in.mbox');
    const list = [];
    for (let i = 1; i <= N; i++) list.push(msg({ subject: `m ${i}`, body: `body ${i}\n` }));
    fs.writeFileSync(file, mboxOf(list));
    for (const name of ['prep', 'prep2']) {
      await runImport({
        store,
        kind: 'mbox',
        paths: [file],
        user: name,
        mailbox: 'INBOX',
        workers: 0,
        progress: false,
      });
    }
    user = await store.getUser('prep');
    other = await store.getUser('prep2');
  });

  afterAll(async () => {
    await store.closePreparedReads();
    await db.drop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  const plain = (u, uids) => store.sourcesWithMailbox(u.id, byName('INBOX'), uids, {});

  prepared(
    'one generic plan per connection, used for every call; answers as the unprepared read',
    async () => {
      for (let uid = 1; uid <= N; uid++) {
        const got = await store.sourcesWithMailbox(user.id, byName('INBOX'), [uid], {
          hidden: true,
        });
        const want = await plain(user, [uid]);
        expect(got.mailbox).toEqual(want.mailbox);
        expect(got.rows).toHaveLength(1);
        expect(got.rows[0].uid).toBe(uid);
        expect(Buffer.compare(got.rows[0].raw, want.rows[0].raw)).toBe(0);
      }
      // Sequential calls reuse the pool's one idle connection: its statement was executed N
      // times with the kept generic plan and never planned for a call.
      const plans = (await store.preparedPlans()).filter((p) => p.name.startsWith('mg_sources'));
      expect(plans).toHaveLength(1);
      expect(plans[0].custom_plans).toBe(0);
      expect(plans[0].generic_plans).toBe(N);
    },
  );

  test('several uids, a uid that is not there, another user, hidden rows, unknown mailbox', async () => {
    const many = await store.sourcesWithMailbox(user.id, byName('INBOX'), [3, 1, 999, 2], {
      hidden: true,
    });
    expect(many.rows.map((r) => r.uid)).toEqual([1, 2, 3]);
    const none = await store.sourcesWithMailbox(user.id, byName('INBOX'), [999], { hidden: true });
    expect(none.rows).toEqual([]);
    expect(none.mailbox).toEqual((await plain(user, [1])).mailbox);
    // Another user's rows come from that user's own statement, never the first user's.
    const theirs = await store.sourcesWithMailbox(other.id, byName('INBOX'), [1], {
      hidden: true,
    });
    expect(theirs.mailbox.id).not.toBe(many.mailbox.id);
    expect(theirs.mailbox).toEqual((await plain(other, [1])).mailbox);
    // An expunge hides a row; the hidden read still returns its bytes (the caller decides).
    const mailboxId = many.mailbox.id;
    await db.knex.raw(
      'UPDATE messages SET expunged = true WHERE user_id = ? AND mailbox_id = ? AND uid = 2',
      [user.id, mailboxId],
    );
    const hidden = await store.sourcesWithMailbox(user.id, byName('INBOX'), [2], { hidden: true });
    expect(hidden.rows.map((r) => r.uid)).toEqual([2]);
    expect((await plain(user, [2])).rows).toEqual([]);
    await expect(
      store.sourcesWithMailbox(user.id, byName('Nope'), [1], { hidden: true }),
    ).rejects.toMatchObject({ code: 'MAILBOX_NOT_FOUND' });
    // By id too (the store's own callers).
    const byId = await store.sourcesWithMailbox(user.id, mailboxId, [1], { hidden: true });
    expect(byId.rows.map((r) => r.uid)).toEqual([1]);
  });

  test('MAILGATE_PG_PREPARED_READS=0 (preparedReads: false): the unprepared statement', async () => {
    const off = new PgStore(db.knex, { preparedReads: false });
    const seen = [];
    const on = (q) => seen.push(q.sql);
    db.knex.on('query', on);
    let got;
    try {
      got = await off.sourcesWithMailbox(user.id, byName('INBOX'), [5], { hidden: true });
    } finally {
      db.knex.removeListener('query', on);
    }
    expect(got.rows.map((r) => r.uid)).toEqual([5]);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(/FROM message_sources s\b/);
  });

  test('counted as a statement of the store (knex query event)', async () => {
    const seen = [];
    const on = (q) => seen.push(q.sql);
    db.knex.on('query', on);
    try {
      await store.sourcesWithMailbox(user.id, byName('INBOX'), [4], { hidden: true });
    } finally {
      db.knex.removeListener('query', on);
    }
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(/FROM mailboxes b LEFT JOIN LATERAL/);
  });

  prepared(
    'a table changed by another process after a connection prepared its read: the read is sent again, not failed',
    async () => {
      // findUser's statement reads users.* (an LMTP recipient): a column added by a migration
      // of another process made PostgreSQL answer "cached plan must not change result type" on
      // every pooled connection that had prepared it (review finding F6).
      const name = (await db.knex('users').where({ id: user.id }).first()).name;
      const warm = await Promise.all([1, 2, 3].map(() => store.findUser(name)));
      for (const u of warm) expect(u.id).toBe(user.id);
      await db.knex.raw('ALTER TABLE users ADD COLUMN f6_probe int');
      try {
        for (let i = 0; i < 4; i++) {
          const u = await store.findUser(name);
          expect(u).toMatchObject({ id: user.id, name, f6_probe: null });
        }
      } finally {
        await db.knex.raw('ALTER TABLE users DROP COLUMN f6_probe');
      }
      expect((await store.findUser(name)).id).toBe(user.id);
    },
  );
});
