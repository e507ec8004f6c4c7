'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { PgStore } = require('@mailgate/store');
const { runImport, exportMh, verifySource } = require('@mailgate/importer');
const { createTestDatabase, useServiceSuite } = require('@mailgate/test-support/db');
const { msg } = require('@mailgate/test-support/mail');
const { startPgServer } = require('../../imap/test/helpers');
const { RawClient } = require('../../imap/test/raw-client');

/*
 * INBOX is one mailbox whatever its case (RFC 3501 5.1), its inferiors under the name INBOX
 * (store mailbox-ref.js canonicalName). A new user's MH tree with nmh's default folder
 * `inbox` used to become a mailbox `inbox` beside INBOX, listed over IMAP but not selectable
 * (`SELECT inbox` opens INBOX): its mail was out of reach.
 */
describe('INBOX in any case is INBOX', () => {
  const ctx = useServiceSuite('inbox-case');

  test('an MH folder named inbox is imported into INBOX, and IMAP selects its mail', async () => {
    const root = path.join(ctx.tmp, 'mh');
    for (const [dir, n] of [
      ['inbox', 3],
      ['inbox/lists', 2],
    ]) {
      fs.mkdirSync(path.join(root, dir), { recursive: true });
      for (let i = 1; i <= n; i++) {
        fs.writeFileSync(path.join(root, dir, String(i)), msg({ subject: `${dir} ${i}` }));
      }
    }
    const store = ctx.service.store;
    await runImport({ store, kind: 'mh', paths: [root], user: 'nmh', workers: 0, progress: false });
    const user = await store.getUser('nmh');
    const names = (await store.listMailboxes(user.id)).map((m) => [m.name, Number(m.total)]);
    expect(names.sort()).toEqual([
      ['INBOX', 3],
      ['INBOX/lists', 2],
    ]);
    expect((await store.getMailbox(user.id, 'Inbox')).name).toBe('INBOX');
    // export mh puts every file back where it was: inbox/N, not the root
    const out = path.join(ctx.tmp, 'out');
    await exportMh({ store, user: 'nmh', out });
    const files = (dir, pre = '') =>
      fs
        .readdirSync(dir, { withFileTypes: true })
        .flatMap((e) =>
          e.isDirectory() ? files(path.join(dir, e.name), `${pre}${e.name}/`) : [`${pre}${e.name}`],
        )
        .sort();
    expect(files(out)).toEqual(files(root));
    for (const f of files(root)) {
      expect(fs.readFileSync(path.join(out, f)).equals(fs.readFileSync(path.join(root, f)))).toBe(
        true,
      );
    }
  });

  test('the same message in an MH root and its inbox folder is kept twice (one mailbox, two copies)', async () => {
    const root = path.join(ctx.tmp, 'mh2');
    fs.mkdirSync(path.join(root, 'inbox'), { recursive: true });
    const same = msg({ subject: 'twice' });
    fs.writeFileSync(path.join(root, '1'), same);
    fs.writeFileSync(path.join(root, 'inbox', '1'), same);
    const store = ctx.service.store;
    const r = await runImport({
      store,
      kind: 'mh',
      paths: [root],
      user: 'twice',
      workers: 0,
      progress: false,
    });
    expect(r.imported).toBe(2);
    const user = await store.getUser('twice');
    expect((await store.listMailboxes(user.id)).map((m) => [m.name, Number(m.total)])).toEqual([
      ['INBOX', 2],
    ]);
  });

  test('verify reads an inbox folder as the import stored it: both copies counted, one lost is missing', async () => {
    const root = path.join(ctx.tmp, 'mh2'); // the tree of the test above, imported as `twice`
    const store = ctx.service.store;
    const ok = await verifySource({ store, user: 'twice', kind: 'mh', path: root });
    expect(ok).toMatchObject({ ok: true, messages: 2, present: 2 });
    const be = await ctx.service.openBackend('pg', 'twice');
    await be.expunge('INBOX', [2], { force: true });
    await be.close();
    const lost = await verifySource({ store, user: 'twice', kind: 'mh', path: root });
    expect(lost).toMatchObject({ ok: false, present: 1, missing: 1 });
  });

  test('create, rename and subscribe by another case of INBOX act on INBOX', async () => {
    const be = await ctx.service.openBackend('pg', 'nmh');
    await expect(be.createMailbox('inbox')).rejects.toMatchObject({ code: 'MAILBOX_EXISTS' });
    await be.createMailbox('Inbox/Later');
    await expect(be.renameMailbox('Sent', 'INBOX')).rejects.toMatchObject({
      code: expect.stringMatching(/MAILBOX_EXISTS|MAILBOX_NOT_FOUND/),
    });
    await expect(be.deleteMailbox('inbox')).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    const list = (await be.listMailboxes()).map((m) => m.name).sort();
    expect(list).toEqual(['INBOX', 'INBOX/Later', 'INBOX/lists']);
    expect((await be.status('inbox')).name).toBe('INBOX');
    const r = await be.search('in:inbox/lists', {});
    expect(r.total).toBe(2);
    await be.close();
  });
});

test('over IMAP: SELECT inbox and SELECT INBOX are the same mailbox, CREATE inbox is refused', async () => {
  const env = await startPgServer({ users: { ann: 'ann pw 12' } });
  try {
    const be = await env.service.openBackend('pg', 'ann');
    await be.createMailbox('inbox');
    await be.append('inbox', msg({ subject: 'hello' }), {});
    await be.close();
    const c = await RawClient.connect(env.port);
    await c.cmd('a', 'LOGIN ann "ann pw 12"');
    const list = await c.cmd('b', 'LIST "" "*"');
    expect(list.match(/^\* LIST .*$/gm)).toHaveLength(1);
    expect(await c.cmd('c', 'SELECT inbox')).toMatch(/\* 1 EXISTS/);
    expect(await c.cmd('d', 'CREATE Inbox')).toMatch(/^d NO /m);
    // inferiors too: `inbox/sub` is INBOX/sub for every command
    expect(await c.cmd('e', 'CREATE inbox/sub')).toMatch(/^e OK/m);
    expect(await c.cmd('f', 'APPEND inbox/sub {5}\r\nhello')).toMatch(/^f OK/m);
    expect(await c.cmd('g', 'SELECT INBOX/sub')).toMatch(/\* 1 EXISTS/);
    expect(await c.cmd('h', 'DELETE inbox/sub')).toMatch(/^h NO \[INUSE\]/m);
    expect(await c.cmd('i', 'LIST "" "*"')).toMatch(/\* LIST \([^)]*\) "\/" "?INBOX\/sub"?\r\n/);
    c.close();
  } finally {
    await env.close();
  }
});

test('migration: case variants of INBOX take its name (over an empty INBOX), or a marked one; inferiors follow', async () => {
  const db = await createTestDatabase();
  try {
    const k = db.knex;
    const name = { name: '20261126030000_inbox_case.js' };
    await k.migrate.down(name);
    const user = async (u) => {
      const id = (await k.raw('INSERT INTO users (name) VALUES (?) RETURNING id', [u])).rows[0].id;
      // The partitions the insert below writes through its triggers (the word vocabulary's:
      // 20261203310100_word_vocabulary.js, which stays applied).
      for (const t of [
        'messages',
        'message_words',
        'message_vocab',
        'message_chunks',
        'quarantine',
      ]) {
        await k.raw(`CREATE TABLE ${t}_u${Number(id)} PARTITION OF ${t} FOR VALUES IN (${id})`);
      }
      return id;
    };
    // a: no INBOX. b: an INBOX with mail. c: the empty INBOX an IMAP login made, and INBOX/sub.
    const a = await user('a');
    const b = await user('b');
    const c = await user('c');
    const boxes = {
      [a]: ['inbox', 'inbox/sub', 'Sent'],
      [b]: ['INBOX', 'Inbox', 'Inbox/x', 'inboxes'],
      [c]: ['INBOX', 'inbox', 'inbox/sub', 'INBOX/sub'],
    };
    const ids = {};
    for (const [u, list] of Object.entries(boxes)) {
      for (const n of list) {
        ids[`${u}:${n}`] = (
          await k.raw(
            'INSERT INTO mailboxes (user_id, name, uidvalidity) VALUES (?, ?, 1) RETURNING id',
            [u, n],
          )
        ).rows[0].id;
      }
    }
    await k.raw(
      `INSERT INTO messages (user_id, mailbox_id, uid, modseq, content_hash, internal_date, size,
                             header_text, body_text)
       VALUES (?, ?, 1, 1, '\\x01', now(), 10, 'subject: x', 'y')`,
      [b, ids[`${b}:INBOX`]],
    );
    await k.raw(
      "INSERT INTO quarantine (user_id, mailbox, source, position, reason, raw, content_hash) VALUES (?, 'inbox/sub', 's', 'p', 'binary', '\\x00', '\\x00')",
      [a],
    );
    await k.migrate.up(name);
    const names = async (u) =>
      (await k.raw('SELECT id, name FROM mailboxes WHERE user_id = ? ORDER BY id', [u])).rows;
    expect(await names(a)).toEqual([
      { id: ids[`${a}:inbox`], name: 'INBOX' },
      { id: ids[`${a}:inbox/sub`], name: 'INBOX/sub' },
      { id: ids[`${a}:Sent`], name: 'Sent' },
    ]);
    expect(await names(b)).toEqual([
      { id: ids[`${b}:INBOX`], name: 'INBOX' },
      { id: ids[`${b}:Inbox`], name: `Inbox (id ${ids[`${b}:Inbox`]})` },
      { id: ids[`${b}:Inbox/x`], name: `Inbox (id ${ids[`${b}:Inbox`]})/x` },
      { id: ids[`${b}:inboxes`], name: 'inboxes' },
    ]);
    // c's empty INBOX gave way; its inbox/sub found INBOX/sub taken
    expect(await names(c)).toEqual([
      { id: ids[`${c}:inbox`], name: 'INBOX' },
      { id: ids[`${c}:inbox/sub`], name: `INBOX/sub (id ${ids[`${c}:inbox/sub`]})` },
      { id: ids[`${c}:INBOX/sub`], name: 'INBOX/sub' },
    ]);
    const q = await k.raw('SELECT mailbox FROM quarantine WHERE user_id = ?', [a]);
    expect(q.rows).toEqual([{ mailbox: 'INBOX/sub' }]);
    await k.migrate.latest();
  } finally {
    await db.drop();
  }
});

test('a store without a cache resolves names the same way', async () => {
  const db = await createTestDatabase();
  try {
    const store = new PgStore(db.knex, { listCacheRows: 0 });
    const u = await store.createUser('plain');
    await store.ensureMailbox(u.id, 'INBOX');
    expect((await store.ensureMailbox(u.id, 'iNbOx')).name).toBe('INBOX');
    expect((await store.createMailbox(u.id, 'inbox/a')).name).toBe('INBOX/a');
  } finally {
    await db.drop();
  }
});
