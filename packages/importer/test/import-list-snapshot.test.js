'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { PgStore } = require('@mailgate/store');
const { runImport } = require('@mailgate/importer');
const { useCliSuite } = require('@mailgate/test-support/db');
const { msg, mboxOf } = require('@mailgate/test-support/mail');

/*
 * The importer's last step writes the list view snapshot of each mailbox it gave mail to
 * (packages/importer/lib/import.js writeListSnapshots): once per mailbox and run, however many
 * files fed it; none after an interrupted run; and a failed write leaves the mail imported,
 * with a warning.
 */
describe('import: list view snapshots at the end of the run', () => {
  const ctx = useCliSuite('ils');
  let store;
  const files = [];

  const snapshots = async (userName) =>
    (
      await ctx.db.knex.raw(
        `SELECT b.name, s.rows, s.modseq, b.highestmodseq FROM list_snapshots s
           JOIN mailboxes b ON b.id = s.mailbox_id
           JOIN users u ON u.id = s.user_id WHERE u.name = ? ORDER BY b.name`,
        [userName],
      )
    ).rows;
  const run = (user, opts = {}) =>
    runImport({
      store,
      kind: 'mbox',
      paths: files,
      user,
      mailbox: 'Box',
      workers: 0,
      progress: false,
      batchSize: 2,
      ...opts,
    });

  beforeAll(() => {
    store = new PgStore(ctx.db.knex, { listCacheRows: 1000 });
    for (let f = 0; f < 3; f++) {
      const file = path.join(ctx.tmp, `part${f}.mbox`);
      fs.writeFileSync(
        file,
        mboxOf([1, 2, 3].map((i) => msg({ subject: `File ${f} message ${i}` }))),
      );
      files.push(file);
    }
  });

  test('three files into one mailbox: one snapshot, written once, at the mailbox modseq', async () => {
    const calls = [];
    const write = store.writeListSnapshot.bind(store);
    store.writeListSnapshot = (...a) => {
      calls.push(a);
      return write(...a);
    };
    try {
      const r = await run('ils1');
      expect(r.imported).toBe(9);
      expect(r.stages.snapshotMs).toBeGreaterThanOrEqual(0);
      expect(calls).toHaveLength(1);
      const s = await snapshots('ils1');
      expect(s).toHaveLength(1);
      expect(s[0]).toMatchObject({ name: 'Box', rows: 9 });
      expect(s[0].modseq).toBe(s[0].highestmodseq);
      // A re-run imports nothing new: nothing to write.
      calls.length = 0;
      expect((await run('ils1')).imported).toBe(0);
      expect(calls).toHaveLength(0);
    } finally {
      delete store.writeListSnapshot;
    }
  });

  test('an interrupted run writes none; a failed write is a warning, the mail stays', async () => {
    const ac = new AbortController();
    ac.abort();
    const r = await run('ils2', { signal: ac.signal });
    expect(r.interrupted).toBe(true);
    expect(await snapshots('ils2')).toEqual([]);
    store.writeListSnapshot = async () => {
      throw Object.assign(new Error('connection lost'), { code: 'ECONNRESET' });
    };
    try {
      const done = await run('ils3');
      expect(done.imported).toBe(9);
      expect(done.warnings).toContainEqual(
        expect.objectContaining({ code: 'LIST_SNAPSHOT_FAILED' }),
      );
      expect(await snapshots('ils3')).toEqual([]);
    } finally {
      delete store.writeListSnapshot;
    }
    const user = await store.getUser('ils3');
    const box = await store.getMailbox(user.id, 'Box');
    expect(await store.scanList(user.id, box.id)).toHaveLength(9);
    // That read wrote the snapshot in the background: done before the database goes.
    await store.settleBackground();
    expect(await snapshots('ils3')).toMatchObject([{ name: 'Box', rows: 9 }]);
  });
});
