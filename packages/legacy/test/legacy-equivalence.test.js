'use strict';

/*
 * Issue 5 equivalence on real mail: the same Enron messages as an mbox and a Maildir, served
 * directly (mbox, maildir backends), by Dovecot (imap backend on mbox and on Maildir) and
 * imported into PostgreSQL (pg). Searches covering the query language's substring, flag,
 * date, size and structure terms return the same messages on every backend; header scans
 * return the same rows; expunging the same messages leaves the same remaining set. Messages
 * are compared by Message-ID + body hash (support/legacy-corpus.js messageKey), since uids
 * differ per backend. Needs Dovecot and root (skips with a reason outside CI).
 */

const { skipOutsideCI, dovecotMissing } = require('@mailgate/test-support/skip');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const dovecot = require('@mailgate/dovecot');
const { corpusDir } = require('@mailgate/test-support/corpus');
const { createTestDatabase } = require('@mailgate/test-support/db');
const { buildLegacyMail, messageKey, copier } = require('@mailgate/test-support/legacy-corpus');
const { runImport } = require('@mailgate/importer');
const { MboxBackend, MaildirBackend, ImapBackend } = require('@mailgate/legacy');

const corpus = corpusDir();
const skipReason = skipOutsideCI(
  __filename,
  dovecotMissing() || (corpus ? null : 'shared corpus not found'),
);
const d = skipReason ? describe.skip : describe;

const N = 400;
const QUERIES = [
  'text:enron',
  'from:allen',
  'to:john',
  'cc:enron.com',
  'subject:re',
  'subject:"West Position"',
  'body:gas',
  'text:price -subject:re',
  'from:allen OR subject:gas',
  '-text:enron',
  'before:2001-06-01',
  'after:2001-11-01',
  'on:2001-12-07',
  'larger:10k',
  'smaller:1500',
  'has:attachment',
  'is:unread',
  'is:flagged',
  'in:INBOX text:meeting',
  'text:zzqqxx-absent',
];

d('legacy backends agree with PostgreSQL on real mail', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-eq-'));
  let db;
  let userId;
  let mailboxId;
  const inst = {};
  const backends = {};
  const keyOf = {}; // backend → Map(uid → key)

  beforeAll(async () => {
    const src = buildLegacyMail(path.join(corpus, 'enron', 'maildir'), N, path.join(tmp, 'src'), {
      strictHeaders: true,
    });
    // Each path gets its own copy: expunge changes them.
    const copy = copier(path.join(tmp, 'src'), tmp);
    const mb = copy('direct-mbox');
    const md = copy('direct-maildir');
    backends.mbox = new MboxBackend(path.join(mb, 'mail'));
    backends.maildir = new MaildirBackend(path.join(md, 'Maildir'));
    [inst.mbox, inst.maildir] = await Promise.all([
      dovecot.start({ format: 'mbox', mail: src.mbox }),
      dovecot.start({ format: 'maildir', mail: src.maildir }),
    ]);
    for (const k of ['mbox', 'maildir']) {
      backends[`imap-${k}`] = new ImapBackend({
        host: inst[k].host,
        port: inst[k].port,
        login: inst[k].user,
        password: inst[k].password,
        tls: false,
      });
    }
    db = await createTestDatabase();
    await runImport({
      store: db.store,
      kind: 'mbox',
      paths: [src.mbox],
      user: 'eq',
      workers: 0,
      progress: false,
    });
    userId = (await db.store.getUser('eq')).id;
    mailboxId = (await db.store.getMailbox(userId, 'INBOX')).id;

    // uid → key per backend, read once.
    // The bytes as the store gives them back (it keeps them compressed, store raw-codec.js).
    keyOf.pg = new Map();
    for await (const r of db.store.streamSources(userId, mailboxId))
      keyOf.pg.set(Number(r.uid), messageKey(r.raw, null));
    for (const k of ['mbox', 'maildir']) {
      keyOf[k] = new Map();
      for await (const e of backends[k].entries('INBOX'))
        keyOf[k].set(e.uid, messageKey(e.raw, null));
    }
    for (const k of ['imap-mbox', 'imap-maildir']) {
      keyOf[k] = new Map();
      await backends[k].pool.with('INBOX', async (c) => {
        for await (const m of c.fetch('1:*', { uid: true, source: true })) {
          keyOf[k].set(m.uid, messageKey(m.source, null));
        }
      });
    }
    for (const k of Object.keys(keyOf)) expect(keyOf[k].size).toBe(src.count);
  }, 300000);

  afterAll(async () => {
    for (const b of Object.values(backends)) if (b.close) await b.close();
    await Promise.all(Object.values(inst).map((i) => i.stop()));
    if (db) await db.drop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  const keysFor = (k, uids) => uids.map((u) => keyOf[k].get(u)).sort();

  async function searchAll(q) {
    const out = {};
    const pg = await db.store.search(userId, q, { mailboxId });
    out.pg = keysFor(
      'pg',
      pg.hits.map((h) => h.uid),
    );
    for (const k of Object.keys(backends)) {
      const r = await backends[k].search(q, { mailbox: 'INBOX' });
      out[k] = keysFor(
        k,
        r.hits.map((h) => h.uid),
      );
    }
    return out;
  }

  test('a few messages flagged the same way on every backend first', async () => {
    // Gives is:unread / is:flagged something to find (uids 1..N are the same messages on
    // every backend: same order of the same source).
    const uids = [2, 5, 7, 11];
    await db.store.setFlags(userId, mailboxId, { uids, add: ['\\Flagged', '\\Seen'] });
    for (const b of Object.values(backends))
      await b.setFlags('INBOX', { uids, add: ['\\Flagged', '\\Seen'] });
    const r = await searchAll('is:flagged');
    for (const k of Object.keys(r)) expect([k, r[k].length]).toEqual([k, 4]);
  });

  test.each(QUERIES)(
    'search %s: same messages on pg, mbox, maildir, imap-mbox, imap-maildir',
    async (q) => {
      const r = await searchAll(q);
      const diff = {};
      for (const k of Object.keys(r)) {
        const extra = r[k].filter((x) => !r.pg.includes(x));
        const missing = r.pg.filter((x) => !r[k].includes(x));
        if (extra.length || missing.length || r[k].length !== r.pg.length) {
          diff[k] = {
            pg: r.pg.length,
            got: r[k].length,
            extra: extra.slice(0, 3),
            missing: missing.slice(0, 3),
          };
        }
      }
      expect(diff).toEqual({});
    },
  );

  test('header scans return the same rows', async () => {
    const shape = (k, rows) =>
      rows
        .map((r) =>
          JSON.stringify([
            keyOf[k].get(r.uid),
            r.subject,
            r.from && r.from.address,
            (r.to || []).map((a) => a.address),
            (r.cc || []).map((a) => a.address),
            r.date,
            r.messageId,
            r.flags.filter((f) => f !== '\\Recent'),
          ]),
        )
        .sort();
    const pgRows = await db.store.scanHeaders(userId, mailboxId);
    const want = shape('pg', pgRows);
    expect(want.length).toBe(N);
    for (const k of Object.keys(backends)) {
      expect([k, shape(k, await backends[k].scanHeaders('INBOX'))]).toEqual([k, want]);
    }
  });

  test('expunging the same messages leaves the same remaining set', async () => {
    const q = 'text:price';
    await db.store.setFlags(userId, mailboxId, { query: q, add: ['\\Deleted'] });
    const gone = await db.store.expunge(userId, mailboxId);
    expect(gone.expunged.length).toBeGreaterThan(0);
    const remaining = {
      pg: keysFor(
        'pg',
        (await db.store.scanHeaders(userId, mailboxId)).map((r) => r.uid),
      ),
    };
    for (const k of Object.keys(backends)) {
      await backends[k].setFlags('INBOX', { query: q, add: ['\\Deleted'] });
      const r = await backends[k].expunge('INBOX');
      expect([k, r.expunged.length]).toEqual([k, gone.expunged.length]);
      // File backends renumber after an expunge (position uids): compare by content.
      const rows = await backends[k].scanHeaders('INBOX');
      if (k === 'mbox' || k === 'maildir') {
        remaining[k] = [];
        for await (const e of backends[k].entries('INBOX'))
          remaining[k].push(messageKey(e.raw, null));
        remaining[k].sort();
      } else
        remaining[k] = keysFor(
          k,
          rows.map((x) => x.uid),
        );
    }
    expect(remaining.pg.length).toBe(N - gone.expunged.length);
    for (const k of Object.keys(remaining)) expect([k, remaining[k]]).toEqual([k, remaining.pg]);
  });
});
