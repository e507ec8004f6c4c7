'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { PgStore, byName } = require('@mailgate/store');
const { runImport } = require('@mailgate/importer');
const { createTestDatabase } = require('@mailgate/test-support/db');
const { msg, mboxOf } = require('@mailgate/test-support/mail');

/*
 * Mailboxes named in the store's queries (packages/store/lib/mailbox-ref.js): the name is
 * resolved by the statement that reads or locks the mailbox. Another session renames and
 * deletes mailboxes between two calls of one session (whose list cache holds the mailbox
 * under its old name); every answer must be the mailbox the name denotes at that call, and an
 * unknown name MAILBOX_NOT_FOUND, on every operation that takes a name.
 */
describe('mailboxes by name: resolved in the statement, never stale', () => {
  let db;
  let tmp;
  let me; // the session under test (list cache on)
  let other; // another session: renames and deletes
  let plain; // no cache
  let user;

  const importBox = async (mailbox, subject, n) => {
    const file = path.join(tmp, `${mailbox}.mbox`);
    const list = [];
    for (let i = 1; i <= n; i++)
      list.push(msg({ subject: `${subject} ${i}`, body: `${subject}\n` }));
    fs.writeFileSync(file, mboxOf(list));
    await runImport({
      store: other,
      kind: 'mbox',
      paths: [file],
      user: 'byname',
      mailbox,
      workers: 0,
      progress: false,
    });
  };
  const subjects = (rows) => [...new Set(rows.map((r) => r.subject.replace(/ \d+$/, '')))];

  beforeAll(async () => {
    db = await createTestDatabase();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-byname-'));
    me = new PgStore(db.knex, { listCacheRows: 1000 });
    other = new PgStore(db.knex, { listCacheRows: 1000 });
    plain = new PgStore(db.knex, { listCacheRows: 0 });
    await importBox('Alpha', 'alpha', 6);
    await importBox('Beta', 'beta', 4);
    user = await plain.getUser('byname');
  });
  afterAll(async () => {
    await db.drop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  /** Every read of `name` answers from the mailbox whose subjects are `want`. */
  const readsAre = async (store, name, want, count) => {
    const ref = byName(name);
    const uidPage = await store.scanPage(user.id, ref, { limit: 50, withTotal: true });
    expect([subjects(uidPage.rows), uidPage.total]).toEqual([[want], count]);
    const datePage = await store.scanPage(user.id, ref, {
      limit: 50,
      order: 'date',
      desc: true,
      withTotal: true,
    });
    expect([subjects(datePage.rows), datePage.total]).toEqual([[want], count]);
    expect(subjects(await store.scanHeaders(user.id, ref))).toEqual([want]);
    expect((await store.countMessages(user.id, ref)).total).toBe(count);
    const m = await store.getMessage(user.id, ref, 1);
    expect(m.header.subject).toBe(`${want} 1`);
    const s = await store.search(user.id, want, { mailbox: ref });
    expect([s.total, s.hits[0].mailbox]).toEqual([count, name]);
    const raw = await store.sourcesFor(user.id, ref, [1]);
    expect(raw[0].raw.toString()).toContain(`${want} 1`);
  };

  test('renames and a delete by another session between two calls', async () => {
    await readsAre(me, 'Alpha', 'alpha', 6);
    await readsAre(me, 'Beta', 'beta', 4);
    await readsAre(plain, 'Alpha', 'alpha', 6);
    // Swap the names in another session: Alpha → Tmp, Beta → Alpha, Tmp → Beta.
    await other.renameMailbox(user.id, 'Alpha', 'Tmp');
    await other.renameMailbox(user.id, 'Beta', 'Alpha');
    await other.renameMailbox(user.id, 'Tmp', 'Beta');
    await readsAre(me, 'Alpha', 'beta', 4);
    await readsAre(me, 'Beta', 'alpha', 6);
    await readsAre(plain, 'Alpha', 'beta', 4);
    // Writes by name hit the mailbox the name denotes now.
    const f = await me.setFlags(user.id, byName('Alpha'), { uids: [1], add: ['\\Flagged'] });
    expect(f.matched).toBe(1);
    const flagged = await plain.search(user.id, 'is:flagged', { withNames: true });
    expect(flagged.hits.map((h) => h.mailbox)).toEqual(['Alpha']);
    expect((await plain.getMessage(user.id, byName('Alpha'), 1)).header.subject).toBe('beta 1');
    // Deleted by the other session: the name is unknown to this one at once.
    await other.deleteMailbox(user.id, 'Beta');
    await expect(me.scanPage(user.id, byName('Beta'), { limit: 5 })).rejects.toMatchObject({
      code: 'MAILBOX_NOT_FOUND',
    });
  });

  test('pages by name come from the list cache once it holds the mailbox', async () => {
    const fresh = new PgStore(db.knex, { listCacheRows: 1000 });
    const page = () => fresh.scanPage(user.id, byName('Alpha'), { limit: 2, withTotal: true });
    await page(); // by SQL; the mailbox loads in the background
    await Promise.all([...fresh.listCache.loading.values()]);
    const before = { ...fresh.listCache.stats };
    for (let i = 0; i < 3; i++) expect((await page()).total).toBe(4);
    expect(fresh.listCache.stats.hits).toBe(before.hits + 3);
    expect(fresh.listCache.stats.loads).toBe(before.loads);
  });

  test('an unknown name is MAILBOX_NOT_FOUND on every operation that takes one', async () => {
    const nope = byName('Nope');
    const calls = [
      () => me.scanPage(user.id, nope, { limit: 5, withTotal: true }),
      () => me.scanPage(user.id, nope, { limit: 5, order: 'date', withTotal: true }),
      () => me.scanPage(user.id, nope, { limit: 5 }),
      () => me.scanHeaders(user.id, nope),
      () => plain.scanHeaders(user.id, nope),
      () => me.countMessages(user.id, nope),
      () => me.getMessage(user.id, nope, 1),
      () => me.search(user.id, 'text:zqxwvjkq', { mailbox: nope }),
      () => me.sourcesFor(user.id, nope, [1]),
      () => me.sourcesFor(user.id, nope, []),
      () => me.changesSince(user.id, nope, 0),
      () => me.getImapMeta(user.id, nope, [1]),
      () => me.setFlags(user.id, nope, { uids: [1], add: ['\\Seen'] }),
      () => me.expunge(user.id, nope, { uids: [1], force: true }),
      () => me.restoreExpunged(user.id, nope, [1]),
    ];
    for (const call of calls) {
      await expect(call()).rejects.toMatchObject({ code: 'MAILBOX_NOT_FOUND' });
    }
    // An existing mailbox with no answer is an empty answer, not an error.
    expect((await me.search(user.id, 'text:zqxwvjkq', { mailbox: byName('Alpha') })).total).toBe(0);
    expect(await me.getMessage(user.id, byName('Alpha'), 999)).toBeNull();
  });
});
