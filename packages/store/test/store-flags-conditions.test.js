'use strict';

const path = require('node:path');
const { PgStore, byName } = require('@mailgate/store');
const { useCliSuite } = require('@mailgate/test-support/db');
const { msg, importMessages } = require('@mailgate/test-support/mail');

/*
 * IMAP STORE's conditions decided in the write (store mail-ops.js setFlags): FLAGS replaces
 * the whole set, UNCHANGEDSINCE (RFC 7162 3.1.3) leaves newer messages alone and names them.
 * Before, the IMAP server computed both from rows it had read earlier, so a change another
 * session made in between could be overwritten or left standing.
 */
describe('setFlags: replace and unchangedSince in one statement', () => {
  const ctx = useCliSuite('flags-cond');
  let store;
  let user;
  const inbox = byName('INBOX');
  const rowsOf = async (uids) => {
    const r = await ctx.db.knex.raw(
      'SELECT uid, flags, keywords, modseq FROM messages WHERE user_id = ? AND uid = ANY(?) ORDER BY uid',
      [user.id, uids],
    );
    return r.rows.map((x) => ({ ...x, uid: Number(x.uid), modseq: Number(x.modseq) }));
  };

  beforeAll(async () => {
    store = new PgStore(ctx.db.knex, { listCacheRows: 0 });
    await importMessages(store, path.join(ctx.tmp, 'a.mbox'), {
      messages: [1, 2, 3].map((i) => msg({ subject: `m${i}` })),
      user: 'flags',
      mailbox: 'INBOX',
    });
    user = await store.getUser('flags');
  });

  test('replace: the flags and keywords become exactly the given set', async () => {
    await store.setFlags(user.id, inbox, { uids: [1], add: ['\\Seen', 'Junk'] });
    // another session adds a keyword after "our" read of the row
    await store.setFlags(user.id, inbox, { uids: [1], add: ['$Label1'] });
    const r = await store.setFlags(user.id, inbox, {
      uids: [1],
      add: ['\\Flagged'],
      replace: true,
    });
    expect(r.changed.map((c) => c.uid)).toEqual([1]);
    expect(await rowsOf([1])).toMatchObject([{ flags: ['\\Flagged'], keywords: [] }]);
    // replacing with the same set changes nothing (no new modseq)
    const again = await store.setFlags(user.id, inbox, {
      uids: [1],
      add: ['\\Flagged'],
      replace: true,
    });
    expect(again.changed).toEqual([]);
  });

  test('unchangedSince: messages changed after it are left alone and listed in modified', async () => {
    const [m2, m3] = await rowsOf([2, 3]);
    const since = Math.max(m2.modseq, m3.modseq);
    await store.setFlags(user.id, inbox, { uids: [3], add: ['$Other'] }); // a later change
    const r = await store.setFlags(user.id, inbox, {
      uids: [2, 3],
      add: ['\\Deleted'],
      unchangedSince: since,
    });
    expect(r.modified).toEqual([3]);
    expect(r.changed.map((c) => c.uid)).toEqual([2]);
    const rows = await rowsOf([2, 3]);
    expect(rows[0].flags).toContain('\\Deleted');
    expect(rows[1].flags).not.toContain('\\Deleted');
    // 0 (RFC 7162 Example 8): a keyword not set yet is set once; the second time it is
    // listed, and a system flag is always listed
    const once = await store.setFlags(user.id, inbox, {
      uids: [2],
      add: ['$MDNSent'],
      unchangedSince: 0,
    });
    expect({ modified: once.modified, changed: once.changed.map((c) => c.uid) }).toEqual({
      modified: [],
      changed: [2],
    });
    const twice = await store.setFlags(user.id, inbox, {
      uids: [2],
      add: ['$MDNSent'],
      unchangedSince: 0,
    });
    expect({ modified: twice.modified, changed: twice.changed }).toEqual({
      modified: [2],
      changed: [],
    });
    // keywords compare in any case (RFC 3501 2.3.2)
    const other = await store.setFlags(user.id, inbox, {
      uids: [2],
      add: ['$mdnsent'],
      unchangedSince: 0,
    });
    expect(other.modified).toEqual([2]);
    const sys = await store.setFlags(user.id, inbox, {
      uids: [2],
      add: ['\\Answered'],
      unchangedSince: 0,
    });
    expect(sys.modified).toEqual([2]);
    // without the condition nothing is listed
    expect((await store.setFlags(user.id, inbox, { uids: [3], add: ['\\Seen'] })).modified).toEqual(
      [],
    );
  });
});
