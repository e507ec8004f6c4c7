'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { msg, mboxOf } = require('@mailgate/test-support/mail');
const { statementsDuring } = require('@mailgate/test-support/db');
const { createImapServer } = require('../lib');
const { packedBytes } = require('../lib/list-view-cache');
const { startPgServer } = require('./helpers');
const { RawClient } = require('./raw-client');

/*
 * Abuse test of the list-view cache (lib/list-view-cache.js, issue 35.3): one user's heavy
 * list views (many large mailboxes, several sessions at once) run beside an innocent client's.
 * The innocent client gets its whole answer every time, and what the server keeps for it is
 * not evicted by the heavy user, who keeps at most its quarter. Before, the cache was one
 * process-wide list with a fixed 64 MiB bound and no share: a heavy user's reads pushed out
 * everyone's. Counted, never timed: the answers' messages, the bytes the cache holds, the
 * statements the innocent client's next list view sends.
 */

const PW = { heavy: 'heavy pw 123', calm: 'calm pw 123' };
const N = 300; // above fetch.js PACKED_MIN: a list view of the whole mailbox is read packed
const BOXES = ['INBOX', 'Lists', 'Archive', 'Old'];
const LIST = 'FETCH 1:* (BODY.PEEK[HEADER.FIELDS (FROM TO SUBJECT DATE)] FLAGS RFC822.SIZE)';
let env;
let tmp;

/** N messages whose kept lines all have the same length: every mailbox's read has one size. */
const mail = (who) =>
  Array.from({ length: N }, (_, i) =>
    msg({ subject: `${who.padEnd(8)} ${String(i).padStart(6, '0')}`, body: `body ${i}\n` }),
  );

beforeAll(async () => {
  env = await startPgServer({ users: PW });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'list-view-abuse-'));
  for (const [user, boxes] of [
    ['heavy', BOXES],
    ['calm', ['INBOX']],
  ]) {
    for (const mailbox of boxes) {
      const file = path.join(tmp, `${user}-${mailbox}.mbox`);
      fs.writeFileSync(file, mboxOf(mail(user)));
      await env.service.transfer.importMail({
        kind: 'mbox',
        paths: [file],
        user,
        mailbox,
        progress: false,
      });
    }
  }
}, 120000);

afterAll(async () => {
  if (env) await env.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/** A logged-in raw session of `user` with `mailbox` selected. */
async function session(port, user, mailbox = 'INBOX') {
  const c = await RawClient.connect(port);
  await c.cmd('a', `LOGIN ${user} "${PW[user]}"`);
  await c.cmd('b', `EXAMINE ${mailbox}`);
  return c;
}

const answered = (text) => ({
  messages: (text.match(/^\* \d+ FETCH /gm) || []).length,
  ok: /^l\d+ OK /m.test(text),
});

test('a heavy user listing many large mailboxes keeps its share; the innocent user keeps hers and is answered', async () => {
  // The bytes of one mailbox's packed read, as the server keeps it.
  const be = await env.service.openBackend('pg', 'calm');
  let one;
  try {
    one = packedBytes(await be.getImapFieldsRange('INBOX', 1, 2 ** 31));
  } finally {
    await be.close();
  }
  // Room for four reads in all: a user's share is one. Without a share the heavy user's four
  // mailboxes alone would fill the whole cache and push the innocent user's read out.
  const server = createImapServer({
    service: env.service,
    listViewCache: { maxBytes: 4 * one + 64 },
    limits: { idlePollMs: 100 },
  });
  const clients = [];
  try {
    const { port } = await server.listen({ port: 0, host: '127.0.0.1' });
    const cache = server.listViewCache;
    const share = cache.userBytes;
    expect(share).toBeGreaterThanOrEqual(one);
    expect(share).toBeLessThan(2 * one);

    const calm = await session(port, 'calm');
    clients.push(calm);
    expect(answered(await calm.cmd('l0', LIST))).toEqual({ messages: N, ok: true });
    expect(cache.stats().users.get('calm')).toBe(one);

    // The attack: two heavy sessions list all four mailboxes, three times over, while the
    // innocent client lists its mailbox again and again.
    const heavyRound = async (k) => {
      const got = [];
      for (let round = 0; round < 3; round++) {
        for (const box of BOXES) {
          const c = await session(port, 'heavy', box);
          clients.push(c);
          got.push(answered(await c.cmd(`l${k}${round}`, LIST)));
          c.close();
        }
      }
      return got;
    };
    const calmRounds = async () => {
      const got = [];
      for (let i = 1; i <= 6; i++) got.push(answered(await calm.cmd(`l${i}`, LIST)));
      return got;
    };
    const [h1, h2, c1] = await Promise.all([heavyRound(1), heavyRound(2), calmRounds()]);
    for (const a of [...h1, ...h2]) expect(a).toEqual({ messages: N, ok: true });
    for (const a of c1) expect(a).toEqual({ messages: N, ok: true });

    const st = cache.stats();
    expect(st.users.get('heavy')).toBeLessThanOrEqual(share);
    expect(st.users.get('calm')).toBe(one);
    expect(st.bytes).toBeLessThanOrEqual(cache.maxBytes);
    // The innocent user's next list view, in a new session, is answered from what was kept:
    // no read of the kept lines.
    const again = await session(port, 'calm');
    clients.push(again);
    const { result, sql } = await statementsDuring(env.service.store.knex, () =>
      again.cmd('l9', LIST),
    );
    expect(answered(result)).toEqual({ messages: N, ok: true });
    expect(sql.filter((q) => /message_imap/.test(q))).toEqual([]);
    // The heavy user's last read is of its last mailbox listed: deleting that mailbox gives its
    // bytes back at once (DELETE drops the mailbox's reads, like the body cache's entries).
    expect(st.users.get('heavy')).toBe(one);
    const del = await session(port, 'heavy', 'INBOX');
    clients.push(del);
    expect(await del.cmd('d1', `DELETE ${BOXES[BOXES.length - 1]}`)).toMatch(/^d1 OK/m);
    expect(cache.stats().users.get('heavy')).toBeUndefined();
    expect(cache.stats().users.get('calm')).toBe(one);
  } finally {
    for (const c of clients) c.close();
    await server.close();
  }
}, 120000);

test('MAILGATE_IMAP_LIST_VIEW_CACHE_MB bounds the server by default; 0 keeps nothing and still answers', async () => {
  const { loadConfig } = require('@mailgate/core');
  const mb = loadConfig().imapListViewCacheMb;
  expect(env.server.listViewCache.maxBytes).toBe(mb * 1024 * 1024);
  const server = createImapServer({
    service: env.service,
    listViewCache: { maxBytes: 0 },
    limits: { idlePollMs: 100 },
  });
  let c;
  try {
    const { port } = await server.listen({ port: 0, host: '127.0.0.1' });
    c = await session(port, 'calm');
    expect(answered(await c.cmd('l1', LIST))).toEqual({ messages: N, ok: true });
    expect(server.listViewCache.stats()).toMatchObject({ bytes: 0, entries: 0 });
  } finally {
    if (c) c.close();
    await server.close();
  }
}, 60000);
