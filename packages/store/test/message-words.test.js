'use strict';

const path = require('node:path');
const { PgStore } = require('@mailgate/store');
const { useCliSuite } = require('@mailgate/test-support/db');
const { msg, importInbox } = require('@mailgate/test-support/mail');

/*
 * The tsvector lives in message_words (migrations/20261125190000_message_words.js), kept by
 * triggers on messages: every stored message has exactly one row, rebuilt when its words'
 * source columns change and gone with the message, whatever path wrote or removed it.
 */
describe('message_words: one row per message, through import, copy, move, purge and delete', () => {
  const ctx = useCliSuite('mw');
  let store;
  let user;
  let inbox;

  // Rows of messages without a words row, and words rows without a message.
  const orphans = async () =>
    (
      await ctx.db.knex.raw(
        `SELECT
           (SELECT count(*) FROM messages m WHERE m.user_id = ? AND NOT EXISTS (
              SELECT 1 FROM message_words w
               WHERE w.user_id = m.user_id AND w.mailbox_id = m.mailbox_id AND w.uid = m.uid))::int AS bare,
           (SELECT count(*) FROM message_words w WHERE w.user_id = ? AND NOT EXISTS (
              SELECT 1 FROM messages m
               WHERE m.user_id = w.user_id AND m.mailbox_id = w.mailbox_id AND m.uid = w.uid))::int AS stale,
           (SELECT count(*) FROM message_words w WHERE w.user_id = ?)::int AS words`,
        [user.id, user.id, user.id],
      )
    ).rows[0];
  const uidsOf = async (mailbox, q) =>
    (await store.search(user.id, q, { mailbox: { name: mailbox } })).hits.map((h) => h.uid);

  beforeAll(async () => {
    store = new PgStore(ctx.db.knex, { listCacheRows: 0 });
    const messages = [];
    for (let i = 1; i <= 12; i++) {
      messages.push(
        msg({ subject: `Report ${i}`, body: i % 3 === 0 ? 'quarterly gasoline figures\n' : 'x\n' }),
      );
    }
    ({ user, inbox } = await importInbox(store, path.join(ctx.tmp, 'a.mbox'), messages, 'mw'));
  });

  test('import: one row per message; a word search finds exactly the messages with the word', async () => {
    expect(await orphans()).toEqual({ bare: 0, stale: 0, words: 12 });
    const hits = await uidsOf('INBOX', 'gasoline');
    expect(hits).toHaveLength(4);
    // the same set from the substring path (different index, different table)
    expect(await uidsOf('INBOX', 'text:gasoline')).toEqual(hits);
    // under OR and NOT (the set form) and at the top (the per-mailbox form) alike
    expect(await uidsOf('INBOX', 'gasoline OR subject:"Report 1"')).toEqual(
      [...new Set([...hits, ...(await uidsOf('INBOX', 'subject:"Report 1"'))])].sort(
        (a, b) => a - b,
      ),
    );
    expect(await uidsOf('INBOX', '-gasoline')).toHaveLength(8);
    expect(await uidsOf('INBOX', '"quarterly gasoline"')).toEqual(hits);
    expect(await uidsOf('INBOX', '"gasoline quarterly"')).toEqual([]);
  });

  test('copy and move write rows for the new messages; purge and mailbox delete remove them', async () => {
    const hits = await uidsOf('INBOX', 'gasoline');
    const archive = await store.createMailbox(user.id, 'Archive');
    await store.copyMessages(user.id, inbox.id, hits.slice(0, 2), archive.id);
    await store.copyMessages(user.id, inbox.id, hits.slice(2, 3), archive.id, { move: true });
    expect(await uidsOf('Archive', 'gasoline')).toHaveLength(3);
    expect(await uidsOf('INBOX', 'gasoline')).toEqual([hits[0], hits[1], hits[3]]);
    await store.purgeExpunged(user.id, inbox.id);
    expect(await orphans()).toEqual({ bare: 0, stale: 0, words: 14 });

    await store.setFlags(user.id, inbox.id, { uids: [hits[3]], add: ['\\Deleted'] });
    await store.expunge(user.id, inbox.id, { uids: [hits[3]] });
    expect(await uidsOf('INBOX', 'gasoline')).toEqual([hits[0], hits[1]]);
    await store.purgeExpunged(user.id, inbox.id);
    expect(await orphans()).toEqual({ bare: 0, stale: 0, words: 13 });

    await store.deleteMailbox(user.id, 'Archive');
    expect(await orphans()).toEqual({ bare: 0, stale: 0, words: 10 });
  });

  test("a change of a words' source column rewrites the row; a flag change does not touch it", async () => {
    const [uid] = await uidsOf('INBOX', 'gasoline');
    const before = await ctx.db.knex.raw(
      'SELECT xmin::text AS x FROM message_words WHERE user_id = ? AND mailbox_id = ? AND uid = ?',
      [user.id, inbox.id, uid],
    );
    await store.setFlags(user.id, inbox.id, { uids: [uid], add: ['\\Flagged'] });
    const after = await ctx.db.knex.raw(
      'SELECT xmin::text AS x FROM message_words WHERE user_id = ? AND mailbox_id = ? AND uid = ?',
      [user.id, inbox.id, uid],
    );
    expect(after.rows[0].x).toBe(before.rows[0].x);
    // What no code path does today, but the trigger covers (UPDATE OF subject …).
    await ctx.db.knex.raw(
      `UPDATE messages SET subject = 'kerosene' WHERE user_id = ? AND mailbox_id = ? AND uid = ?`,
      [user.id, inbox.id, uid],
    );
    expect(await uidsOf('INBOX', 'kerosene')).toEqual([uid]);
    // The body's words stay: read back from its pieces, the row keeps no body text
    // (migrations/20261130610200_text_in_pieces_only.js, 20261130610400_words_update_pieces.js).
    expect(await uidsOf('INBOX', 'gasoline')).toContain(uid);
    expect(await orphans()).toEqual({ bare: 0, stale: 0, words: 10 });
  });
});
