'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { msg } = require('@mailgate/test-support/mail');
const { statementsDuring } = require('@mailgate/test-support/db');
const { guardPgClients } = require('@mailgate/test-support/pg-serial');
const { corpusDir } = require('@mailgate/test-support/corpus');
const { filesBelow } = require('@mailgate/test-support/files');
const { hostileMessages } = require('@mailgate/test-support/hostile');
const { createImapServer } = require('../lib');
const { toCrlf } = require('@mailgate/mime/crlf');
const { ENTRY_OVERHEAD } = require('../lib/body-cache');
const { startPgServer } = require('./helpers');
const { RawClient } = require('./raw-client');

/*
 * Issue 35.4, "fetch one ≤ 2× Dovecot's": the IMAP server keeps the bytes it served in a
 * bounded in-process cache (lib/body-cache.js), so a repeated FETCH of a message's bytes sends
 * no statement at all. Counted, never timed: the statements PostgreSQL gets, the bytes on the
 * wire, the sizes the cache holds.
 */

// Its servers' credential checks once wrote to the store's one credential connection while
// it was busy (credential-check.pg.test.js): fail on that, not only print pg's deprecation.
guardPgClients();
const PW = { ann: 'ann pw 123', bob: 'bob pw 123' };
const ITEMS =
  'BODY.PEEK[] BODY.PEEK[HEADER] BODY.PEEK[TEXT] BODY.PEEK[1] BODY.PEEK[1.MIME] BODY.PEEK[]<7.300> RFC822.SIZE RFC822.HEADER';
let env;

beforeAll(async () => {
  env = await startPgServer({ users: PW });
  for (const user of ['ann', 'bob']) {
    const be = await env.service.openBackend('pg', user);
    await be.createMailbox('INBOX');
    for (let i = 0; i < 5; i++) await be.append('INBOX', msg({ subject: `${user} ${i}` }), {});
    await be.close();
  }
}, 60000);
afterAll(() => env && env.close());

const statements = (step) => statementsDuring(env.service.store.knex, step);
const uidsOf = (text) => [...text.matchAll(/^\* \d+ FETCH \(UID (\d+)/gm)].map((m) => Number(m[1]));

/** A logged-in raw session of `user` with `mailbox` selected, on `port`. */
async function session(user, mailbox = 'INBOX', port = env.port) {
  const c = await RawClient.connect(port);
  await c.cmd('a', `LOGIN ${user} "${PW[user]}"`);
  await c.cmd('b', `SELECT ${mailbox}`);
  return c;
}

/** Another IMAP server on the same service, with its own cache bounds. */
async function serverWith(bodyCache) {
  const server = createImapServer({ service: env.service, bodyCache, limits: { idlePollMs: 100 } });
  const { port } = await server.listen({ port: 0, host: '127.0.0.1' });
  return { server, port };
}

test('a repeated UID FETCH of the bytes sends no statement, and the same answer', async () => {
  const c = await session('ann');
  try {
    const first = await statements(() => c.cmd('c', 'UID FETCH 3 (BODY.PEEK[])'));
    expect(first.sql).toHaveLength(1);
    expect(first.result).toMatch(/Subject: ann 2\r\n/);
    for (const tag of ['d', 'e']) {
      const again = await statements(() => c.cmd(tag, 'UID FETCH 3 (BODY.PEEK[])'));
      expect(again.sql).toEqual([]);
      expect(again.result).toBe(first.result.replace(/^c OK/m, `${tag} OK`));
    }
    // Sequence numbers, sections and sizes come from the same bytes; FLAGS needs the list
    // row: one statement (the check of the mailbox), no read of the bytes.
    const sec = await statements(() => c.cmd('f', 'FETCH 3 (BODY.PEEK[TEXT] RFC822.SIZE)'));
    expect(sec.sql).toEqual([]);
    expect(sec.result).toMatch(
      /^\* 3 FETCH \(BODY\[TEXT\] \{\d+\}\r\nHello there\.\r\n RFC822\.SIZE \d+\)/m,
    );
    const flags = await statements(() => c.cmd('g', 'UID FETCH 3 (FLAGS BODY.PEEK[])'));
    expect(flags.sql).toHaveLength(1);
    expect(flags.sql[0]).not.toMatch(/message_sources/);
    expect(flags.result).toMatch(/Subject: ann 2\r\n/);
    // Not a PEEK: \Seen is set (a write), so the store is asked.
    const seen = await statements(() => c.cmd('h', 'UID FETCH 3 (BODY[])'));
    expect(seen.sql.some((q) => /\bUPDATE\b/i.test(q))).toBe(true);
    expect(seen.result).toMatch(/FLAGS \(\\Seen /);
  } finally {
    c.close();
  }
});

test('in a read-only mailbox BODY[] and RFC822 set nothing, and are answered from memory', async () => {
  const c = await RawClient.connect(env.port);
  try {
    await c.cmd('a', `LOGIN ann "${PW.ann}"`);
    await c.cmd('b', 'EXAMINE INBOX');
    const first = await statements(() => c.cmd('c', 'UID FETCH 5 (BODY[] RFC822)'));
    expect(first.sql).toHaveLength(1);
    const again = await statements(() => c.cmd('d', 'UID FETCH 5 (BODY[] RFC822)'));
    expect(again.sql).toEqual([]);
    expect(again.result).toBe(first.result.replace(/^c OK/m, 'd OK'));
    expect(again.result).toMatch(/^\* 5 FETCH \(UID 5 BODY\[\] \{\d+\}\r\n[^]*Subject: ann 4\r\n/m);
    expect(again.result).not.toMatch(/FLAGS/);
    const flags = await c.cmd('e', 'UID FETCH 5 (FLAGS)');
    expect(flags).toMatch(/^\* 5 FETCH \(UID 5 FLAGS \(/m);
    expect(flags).not.toMatch(/\\Seen/);
  } finally {
    c.close();
  }
});

test('cached answers are byte-identical to uncached ones over the corpus fixtures', async () => {
  const corpus = corpusDir();
  if (!corpus) {
    console.log(
      '[body-cache] corpus part skipped: the shared corpus (../shared/corpus) is not here',
    );
  }
  const be = await env.service.openBackend('pg', 'ann');
  await be.createMailbox('Odd');
  const fixtures = corpus
    ? [
        ...filesBelow(path.join(corpus, 'fixtures'), '.eml'),
        ...filesBelow(path.join(corpus, 'fixtures'), '.msg'),
      ].sort()
    : [];
  const raws = [
    ...fixtures.map((f) => fs.readFileSync(f)),
    ...hostileMessages()
      .filter((m) => m.raw.length < 1e6)
      .map((m) => m.raw),
    msg({ subject: 'lf', body: 'a\nb\n' }),
    msg({ subject: 'crlf', eol: '\r\n', body: 'a\r\nb\r\n' }),
  ];
  for (const raw of raws) await be.append('Odd', raw, {});
  await be.close();
  // Large enough for every message; and one that caches nothing: the code before the cache.
  const on = await serverWith({ maxBytes: 1 << 30, maxEntryBytes: 1 << 30 });
  const off = await serverWith({ maxBytes: 0 });
  const [a, b] = [await session('ann', 'Odd', on.port), await session('ann', 'Odd', off.port)];
  try {
    const cmd = `UID FETCH 1:* (${ITEMS})`;
    const plain = await b.cmd('c', cmd, 120000);
    const filled = await a.cmd('c', cmd, 120000);
    expect(uidsOf(plain)).toHaveLength(raws.length);
    expect(filled).toBe(plain);
    const hit = await statements(() => a.cmd('c', cmd, 120000));
    expect(hit.sql).toEqual([]);
    expect(hit.result).toBe(plain);
    expect(on.server.bodyCache.stats().entries).toBe(raws.length);
    expect(off.server.bodyCache.stats().entries).toBe(0);
  } finally {
    a.close();
    b.close();
    await on.server.close();
    await off.server.close();
  }
}, 300000);

test('an EXPUNGE drops the entries, and an expunged uid is not served once the session saw it', async () => {
  const be = await env.service.openBackend('pg', 'ann');
  await be.createMailbox('Gone');
  for (let i = 0; i < 4; i++) await be.append('Gone', msg({ subject: `gone ${i}` }), {});
  const c = await session('ann', 'Gone');
  const d = await session('ann', 'Gone');
  const cache = env.server.bodyCache;
  const held = () => cache.stats().users.get('ann') || 0;
  try {
    await c.cmd('c', 'UID FETCH 1:4 (BODY.PEEK[])');
    await d.cmd('c', 'UID FETCH 2 (BODY.PEEK[])');
    const before = held();
    // This session's EXPUNGE.
    await c.cmd('d', 'UID STORE 2 +FLAGS.SILENT (\\Deleted)');
    expect(await c.cmd('e', 'EXPUNGE')).toMatch(/^\* 2 EXPUNGE\r\n/m);
    expect(held()).toBeLessThan(before);
    expect(uidsOf(await c.cmd('f', 'UID FETCH 2 (BODY.PEEK[])'))).toEqual([]);
    // The other session learns of it at its next sync, and never serves it after that.
    expect(await d.cmd('d', 'NOOP')).toMatch(/^\* 2 EXPUNGE\r\n/m);
    expect(uidsOf(await d.cmd('e', 'UID FETCH 2 (BODY.PEEK[])'))).toEqual([]);
    // An expunge made elsewhere (the service, as the HTTP API or another process would):
    // the session's next sync drops the entry with the EXPUNGE it sends.
    const mid = held();
    await be.setFlags('Gone', [3], ['\\Deleted'], []);
    await be.expunge('Gone', [3]);
    expect(await c.cmd('g', 'NOOP')).toMatch(/^\* 2 EXPUNGE\r\n/m);
    expect(held()).toBeLessThan(mid);
    const last = await statements(() => c.cmd('h', 'UID FETCH 3:4 (BODY.PEEK[])'));
    expect(uidsOf(last.result)).toEqual([4]);
  } finally {
    c.close();
    d.close();
    await be.close();
  }
});

test('DELETE of a mailbox drops its entries; a user never gets another user’s bytes', async () => {
  const cache = env.server.bodyCache;
  const be = await env.service.openBackend('pg', 'bob');
  await be.createMailbox('Old');
  await be.append('Old', msg({ subject: 'old one' }), {});
  const c = await session('bob', 'Old');
  try {
    await c.cmd('c', 'UID FETCH 1 (BODY.PEEK[])');
    const held = cache.stats().users.get('bob');
    await c.cmd('d', 'SELECT INBOX');
    await c.cmd('e', 'DELETE Old');
    expect(cache.stats().users.get('bob') || 0).toBeLessThan(held);
    // ann's INBOX uid 1 is cached: bob's uid 1 is bob's own, read from the store.
    const a = await session('ann');
    try {
      await a.cmd('c', 'UID FETCH 1 (BODY.PEEK[])');
      const hit = await statements(() => a.cmd('d', 'UID FETCH 1 (BODY.PEEK[])'));
      expect(hit.sql).toEqual([]);
      expect(hit.result).toMatch(/Subject: ann 0\r\n/);
    } finally {
      a.close();
    }
    const own = await statements(() => c.cmd('f', 'UID FETCH 1 (BODY.PEEK[])'));
    expect(own.sql).toHaveLength(1);
    expect(own.result).toMatch(/Subject: bob 0\r\n/);
    expect(own.result).not.toMatch(/Subject: ann/);
  } finally {
    c.close();
    await be.close();
  }
});

test('the byte bound, the per-user share and the entry cap hold', async () => {
  const body = 'x'.repeat(76) + '\n';
  // What one ~4 KB message costs the cache: its CRLF form (what FETCH serves) and the overhead.
  const entry = toCrlf(msg({ subject: 's 00', body: body.repeat(50) })).length + ENTRY_OVERHEAD;
  const share = 4 * entry; // four messages of a user
  const t = await serverWith({ maxBytes: 3 * share, userBytes: share, maxEntryBytes: 2 * entry });
  const users = ['cat', 'dan', 'eve', 'fay'];
  for (const u of users) {
    await env.service.users.create(u, { password: `${u} pw 123` });
    PW[u] = `${u} pw 123`;
    const be = await env.service.openBackend('pg', u);
    await be.createMailbox('INBOX');
    for (let i = 0; i < 10; i++) {
      await be.append(
        'INBOX',
        msg({ subject: `s ${String(i).padStart(2, '0')}`, body: body.repeat(50) }),
        {},
      );
    }
    await be.append('INBOX', msg({ subject: 'big', body: body.repeat(200) }), {}); // uid 11
    await be.close();
  }
  const cache = t.server.bodyCache;
  const sessions = [];
  try {
    for (const u of users) sessions.push(await session(u, 'INBOX', t.port));
    const [cat, dan, eve, fay] = sessions;
    await dan.cmd('c', 'UID FETCH 1 (BODY.PEEK[])');
    // cat reads its whole mailbox: never more than its share, and dan's entry stays.
    await cat.cmd('c', 'UID FETCH 1:10 (BODY.PEEK[])');
    expect(cache.stats().users.get('cat')).toBeLessThanOrEqual(share);
    expect(cache.stats().users.get('cat')).toBeGreaterThan(share - entry);
    const danAgain = await statements(() => dan.cmd('d', 'UID FETCH 1 (BODY.PEEK[])'));
    expect(danAgain.sql).toEqual([]);
    // cat's oldest went, its newest are answered from memory.
    expect((await statements(() => cat.cmd('d', 'UID FETCH 10 (BODY.PEEK[])'))).sql).toEqual([]);
    expect((await statements(() => cat.cmd('e', 'UID FETCH 1 (BODY.PEEK[])'))).sql).toHaveLength(1);
    // Over the entry cap: served, never kept.
    await eve.cmd('c', 'UID FETCH 11 (BODY.PEEK[])');
    expect(cache.stats().users.get('eve') || 0).toBe(0);
    expect((await statements(() => eve.cmd('d', 'UID FETCH 11 (BODY.PEEK[])'))).sql).toHaveLength(
      1,
    );
    // Three shares in all: eve and fay filling theirs push out the least recently used user.
    await eve.cmd('e', 'UID FETCH 1:4 (BODY.PEEK[])');
    await fay.cmd('c', 'UID FETCH 1:4 (BODY.PEEK[])');
    const st = cache.stats();
    expect(st.bytes).toBeLessThanOrEqual(3 * share);
    expect([...st.users.values()].reduce((x, y) => x + y, 0)).toBe(st.bytes);
    expect(st.users.get('fay')).toBeGreaterThan(share - entry);
    expect(st.users.get('eve')).toBeGreaterThan(share - entry);
    expect((st.users.get('dan') || 0) + (st.users.get('cat') || 0)).toBeLessThanOrEqual(share);
  } finally {
    for (const c of sessions) c.close();
    await t.server.close();
  }
});
