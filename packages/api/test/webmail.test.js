'use strict';

const { useApi, req } = require('./helpers');
const { msg } = require('@mailgate/test-support/mail');

/*
 * The routes webmail needs beyond reading (issue 14): mailbox create/rename/delete, copy and
 * move, append, and the changes feed, all through the mail service; each one keeps other
 * users' mailboxes invisible (404).
 */

const t = useApi();
let alice;
let bob;
beforeAll(async () => {
  [alice, bob] = await t.users('alice', 'bob');
  await t.mail('alice', 'INBOX', [
    msg({ subject: 'one' }),
    msg({ subject: 'two' }),
    msg({ subject: 'three' }),
  ]);
  await t.mail('alice', 'Archive', [msg({ subject: 'archived' })]);
  await t.mail('bob', 'INBOX', [msg({ subject: 'bob only' })]);
});

const call = (method, url, payload, tok = alice, headers) =>
  req(t.app, tok, { method, url: `/api/v1${url}`, payload, headers });
const errorOf = (r) => [r.statusCode, r.json().error.code];
const names = async (tok = alice) =>
  (await call('GET', '/mailboxes', undefined, tok)).json().mailboxes.map((b) => b.name);
const subjects = async (box, tok = alice) =>
  (
    await call(
      'GET',
      `/mailboxes/${encodeURIComponent(box)}/messages?limit=100&order=uid`,
      undefined,
      tok,
    )
  )
    .json()
    .messages.map((m) => [m.uid, m.subject]);

describe('mailbox create, rename, delete', () => {
  test('create, then the same name again is 409', async () => {
    const r = await call('POST', '/mailboxes', { name: 'Drafts' });
    expect(r.statusCode).toBe(201);
    expect(r.json()).toEqual({ name: 'Drafts' });
    expect(await names()).toContain('Drafts');
    expect(await names(bob)).not.toContain('Drafts');
    expect(errorOf(await call('POST', '/mailboxes', { name: 'Drafts' }))).toEqual([
      409,
      'MAILBOX_EXISTS',
    ]);
  });

  test('rename keeps the messages; delete removes the mailbox; INBOX cannot go', async () => {
    await call('POST', '/mailboxes', { name: 'Old' });
    await call('POST', '/mailboxes/Archive/copy', { uids: [1], target: 'Old' });
    const r = await call('PATCH', '/mailboxes/Old', { name: 'Renamed/Sub' });
    expect(r.statusCode).toBe(200);
    expect(await names()).toEqual(expect.arrayContaining(['Renamed/Sub']));
    expect(await names()).not.toContain('Old');
    expect(await subjects('Renamed/Sub')).toEqual([[1, 'archived']]);
    expect(
      (await call('DELETE', `/mailboxes/${encodeURIComponent('Renamed/Sub')}`)).statusCode,
    ).toBe(204);
    expect(await names()).not.toContain('Renamed/Sub');
    expect(errorOf(await call('DELETE', '/mailboxes/INBOX'))).toEqual([400, 'INVALID_INPUT']);
    expect(errorOf(await call('PATCH', '/mailboxes/Nope', { name: 'X' }))).toEqual([
      404,
      'MAILBOX_NOT_FOUND',
    ]);
  });

  test('bad names are coded 400s', async () => {
    expect((await call('POST', '/mailboxes', { name: '' })).statusCode).toBe(400);
    expect((await call('POST', '/mailboxes', { name: 'a\nb' })).statusCode).toBe(400);
    expect((await call('POST', '/mailboxes', {})).json().error.code).toMatch(/^INVALID_/);
  });
});

describe('copy and move', () => {
  test('copy maps source uids to new uids; the source keeps them', async () => {
    await call('POST', '/mailboxes', { name: 'Copies' });
    const r = await call('POST', '/mailboxes/INBOX/copy', { uids: [1, 2], target: 'Copies' });
    expect(r.statusCode).toBe(200);
    const body = r.json();
    expect(body.map).toEqual([
      [1, 1],
      [2, 2],
    ]);
    expect(body.uidvalidity).toBeGreaterThan(0);
    expect(await subjects('Copies')).toEqual([
      [1, 'one'],
      [2, 'two'],
    ]);
    expect((await subjects('INBOX')).map((x) => x[0])).toEqual(expect.arrayContaining([1, 2]));
  });

  test('move takes the message out of the source at once', async () => {
    await call('POST', '/mailboxes', { name: 'Moved' });
    const r = await call('POST', '/mailboxes/INBOX/move', { uids: [3], target: 'Moved' });
    expect(r.statusCode).toBe(200);
    expect(r.json().map).toEqual([[3, 1]]);
    expect((await call('GET', '/mailboxes/INBOX/messages/3')).statusCode).toBe(404);
    expect(await subjects('Moved')).toEqual([[1, 'three']]);
  });

  test('a target that does not exist is 404, and nothing moves', async () => {
    expect(
      errorOf(await call('POST', '/mailboxes/INBOX/move', { uids: [1], target: 'Nope' })),
    ).toEqual([404, 'MAILBOX_NOT_FOUND']);
    expect((await call('GET', '/mailboxes/INBOX/messages/1')).statusCode).toBe(200);
  });
});

describe('append', () => {
  test('stores the exact bytes with flags and keywords', async () => {
    const raw = Buffer.from(
      'From: Alice <alice@example.org>\r\nTo: bob@example.net\r\nSubject: draft \xe9\r\n\r\nBody\r\n',
      'latin1',
    );
    const r = await req(t.app, alice, {
      method: 'POST',
      url: '/api/v1/mailboxes/Drafts/messages?flags=%5CDraft&flags=%5CSeen&flags=todo',
      payload: raw,
      headers: { 'content-type': 'message/rfc822' },
    });
    expect(r.statusCode).toBe(201);
    const { uid, uidvalidity } = r.json();
    expect(uid).toBe(1);
    expect(uidvalidity).toBeGreaterThan(0);
    const m = (await call('GET', `/mailboxes/Drafts/messages/${uid}`)).json();
    expect(m.flags.sort()).toEqual(['\\Draft', '\\Seen']);
    expect(m.keywords).toEqual(['todo']);
    expect(m.subject).toMatch(/^draft/);
    const back = await call('GET', `/mailboxes/Drafts/messages/${uid}/raw`);
    expect(back.rawPayload.equals(raw)).toBe(true);
  });

  test('an empty body or a JSON body is refused', async () => {
    const empty = await req(t.app, alice, {
      method: 'POST',
      url: '/api/v1/mailboxes/Drafts/messages',
      payload: Buffer.alloc(0),
      headers: { 'content-type': 'message/rfc822' },
    });
    expect(errorOf(empty)).toEqual([400, 'INVALID_INPUT']);
    const json = await call('POST', '/mailboxes/Drafts/messages', { raw: 'x' });
    expect(errorOf(json)).toEqual([400, 'INVALID_INPUT']);
  });
});

describe('changes since a modseq', () => {
  test('flag changes, appends and expunges from another session all show; then nothing', async () => {
    const box = (await call('GET', '/mailboxes')).json().mailboxes.find((b) => b.name === 'INBOX');
    const since = box.highestModseq;
    const none = (await call('GET', `/mailboxes/INBOX/changes?since=${since}`)).json();
    expect(none).toEqual({ highestModseq: since, changed: [], expunged: [] });

    // Another session of the same user (its own token) changes the mailbox.
    const other = (await t.db.store.createToken((await t.db.store.getUser('alice')).id)).token;
    await call('POST', '/mailboxes/INBOX/flags', { uids: [1], add: ['\\Flagged'] }, other);
    const appended = await req(t.app, other, {
      method: 'POST',
      url: '/api/v1/mailboxes/INBOX/messages',
      payload: msg({ subject: 'new arrival' }),
      headers: { 'content-type': 'message/rfc822' },
    });
    const newUid = appended.json().uid;
    await call('POST', '/mailboxes/INBOX/flags', { uids: [2], add: ['\\Deleted'] }, other);
    await call('POST', '/mailboxes/INBOX/expunge', null, other);

    const r = await call('GET', `/mailboxes/INBOX/changes?since=${since}`);
    expect(r.statusCode).toBe(200);
    const c = r.json();
    expect(c.highestModseq).toBeGreaterThan(since);
    expect(c.expunged).toEqual([2]);
    const byUid = new Map(c.changed.map((x) => [x.uid, x]));
    expect(byUid.get(1).flags).toContain('\\Flagged');
    expect(byUid.has(newUid)).toBe(true);
    expect(byUid.has(2)).toBe(false);
    for (const x of c.changed) expect(x.modseq).toBeGreaterThan(since);

    const after = (await call('GET', `/mailboxes/INBOX/changes?since=${c.highestModseq}`)).json();
    expect(after).toEqual({ highestModseq: c.highestModseq, changed: [], expunged: [] });
  });

  test('since is required and must be a number', async () => {
    expect((await call('GET', '/mailboxes/INBOX/changes')).statusCode).toBe(400);
    expect((await call('GET', '/mailboxes/INBOX/changes?since=x')).statusCode).toBe(400);
  });
});

describe("another user's mailboxes are not found", () => {
  test('bob cannot reach alice-only mailboxes through any new route', async () => {
    const aliceOnly = 'Archive';
    expect(await names(bob)).not.toContain(aliceOnly);
    const tries = [
      ['PATCH', `/mailboxes/${aliceOnly}`, { name: 'Stolen' }],
      ['DELETE', `/mailboxes/${aliceOnly}`],
      ['POST', `/mailboxes/${aliceOnly}/copy`, { uids: [1], target: 'INBOX' }],
      ['POST', `/mailboxes/${aliceOnly}/move`, { uids: [1], target: 'INBOX' }],
      ['POST', '/mailboxes/INBOX/copy', { uids: [1], target: aliceOnly }],
      ['POST', '/mailboxes/INBOX/move', { uids: [1], target: aliceOnly }],
      ['GET', `/mailboxes/${aliceOnly}/changes?since=0`],
      ['GET', `/mailboxes/${aliceOnly}/messages?limit=5&order=-date`],
      ['GET', `/search?q=archived&mailbox=${aliceOnly}&order=-date&limit=5`],
      ['GET', `/threads?mailbox=${aliceOnly}`],
    ];
    for (const [method, url, body] of tries) {
      expect([method, url, ...errorOf(await call(method, url, body, bob))]).toEqual([
        method,
        url,
        404,
        'MAILBOX_NOT_FOUND',
      ]);
    }
    const append = await req(t.app, bob, {
      method: 'POST',
      url: `/api/v1/mailboxes/${aliceOnly}/messages`,
      payload: msg({ subject: 'intruder' }),
      headers: { 'content-type': 'message/rfc822' },
    });
    expect(errorOf(append)).toEqual([404, 'MAILBOX_NOT_FOUND']);
    // Alice's Archive is untouched.
    expect(await subjects('Archive')).toEqual([[1, 'archived']]);
    // Bob's own INBOX: alice's uids do not exist there, nothing is copied.
    expect(await subjects('INBOX', bob)).toEqual([[1, 'bob only']]);
  });

  test('every new route needs a token', async () => {
    for (const [method, url] of [
      ['POST', '/mailboxes'],
      ['PATCH', '/mailboxes/INBOX'],
      ['DELETE', '/mailboxes/INBOX'],
      ['POST', '/mailboxes/INBOX/copy'],
      ['POST', '/mailboxes/INBOX/move'],
      ['POST', '/mailboxes/INBOX/messages'],
      ['GET', '/mailboxes/INBOX/changes?since=0'],
    ]) {
      expect(errorOf(await call(method, url, undefined, null))).toEqual([401, 'UNAUTHORIZED']);
    }
  });

  test('the OpenAPI document lists them', async () => {
    const doc = (await req(t.app, null, { url: '/docs/json' })).json();
    expect(Object.keys(doc.paths['/api/v1/mailboxes'])).toEqual(
      expect.arrayContaining(['get', 'post']),
    );
    expect(Object.keys(doc.paths['/api/v1/mailboxes/{mailbox}'])).toEqual(
      expect.arrayContaining(['patch', 'delete']),
    );
    for (const p of ['copy', 'move', 'changes', 'messages']) {
      expect(doc.paths).toHaveProperty([`/api/v1/mailboxes/{mailbox}/${p}`]);
    }
    expect(doc.paths['/api/v1/mailboxes/{mailbox}/messages']).toHaveProperty('post');
  });
});

describe('one-time sign-in links', () => {
  test('a link token is traded once for a session token, then is worthless', async () => {
    const u = await t.db.store.getUser('alice');
    const link = (await t.db.store.createToken(u.id, { ttlSeconds: 900, label: 'link' })).token;
    const r = await call('POST', '/session/link', { link }, null);
    expect(r.statusCode).toBe(201);
    const session = r.json().token;
    expect(session).not.toBe(link);
    expect((await call('GET', '/mailboxes', undefined, session)).statusCode).toBe(200);
    expect(errorOf(await call('GET', '/mailboxes', undefined, link))).toEqual([
      401,
      'UNAUTHORIZED',
    ]);
    expect(errorOf(await call('POST', '/session/link', { link }, null))).toEqual([
      401,
      'UNAUTHORIZED',
    ]);
    expect(errorOf(await call('POST', '/session/link', { link: 'mg_nonsense' }, null))).toEqual([
      401,
      'UNAUTHORIZED',
    ]);
    expect((await call('POST', '/session/link', {}, null)).statusCode).toBe(400);
  });

  test('two tabs opening the same link: only one gets a session', async () => {
    const u = await t.db.store.getUser('alice');
    const link = (await t.db.store.createToken(u.id, { ttlSeconds: 900, label: 'link' })).token;
    const both = await Promise.all([
      call('POST', '/session/link', { link }, null),
      call('POST', '/session/link', { link }, null),
    ]);
    expect(both.map((r) => r.statusCode).sort()).toEqual([201, 401]);
  });
});

describe('search: total, order, cursor, limit', () => {
  let carol;
  beforeAll(async () => {
    carol = await t.user('carol');
    await t.mail('carol', 'INBOX', [
      msg({
        from: 'Zed <zed@example.org>',
        subject: 'Re: budget',
        date: 'Tue, 05 Mar 2002 10:00:00 +0000',
        body: 'budget '.repeat(50),
      }),
      msg({
        from: 'Amy <amy@example.org>',
        subject: 'budget plan',
        date: 'Mon, 04 Mar 2002 10:00:00 +0000',
      }),
      msg({
        from: 'Bob <bob@example.org>',
        subject: 'Fwd: another budget',
        date: 'Wed, 06 Mar 2002 10:00:00 +0000',
        body: 'budget '.repeat(10),
      }),
      msg({
        from: 'Cy <cy@example.org>',
        subject: 'unrelated',
        date: 'Thu, 07 Mar 2002 10:00:00 +0000',
      }),
    ]);
    await t.mail('carol', 'Work', [
      msg({
        from: 'Dan <dan@example.org>',
        subject: 'budget review',
        date: 'Fri, 01 Mar 2002 10:00:00 +0000',
      }),
    ]);
  });
  const search = async (qs) => {
    const r = await call('GET', `/search?${qs}`, undefined, carol);
    expect(r.statusCode).toBe(200);
    return r.json();
  };
  const rows = (b) => b.messages.map((m) => `${m.mailbox}/${m.subject}`);

  test('each order sorts the rows; the total counts every match', async () => {
    const q = 'q=budget&limit=10';
    expect((await search(q)).total).toBe(4);
    expect(rows(await search(`${q}&order=date`))).toEqual([
      'Work/budget review',
      'INBOX/budget plan',
      'INBOX/Re: budget',
      'INBOX/Fwd: another budget',
    ]);
    expect(rows(await search(`${q}&order=-date`))[0]).toBe('INBOX/Fwd: another budget');
    expect(rows(await search(`${q}&order=from`)).map((x) => x.split('/')[1])).toEqual([
      'budget plan',
      'Fwd: another budget',
      'budget review',
      'Re: budget',
    ]);
    // Base subject: Re:/Fwd: do not count.
    expect(rows(await search(`${q}&order=subject`))).toEqual([
      'INBOX/Fwd: another budget',
      'INBOX/Re: budget',
      'INBOX/budget plan',
      'Work/budget review',
    ]);
    const bySize = (await search(`${q}&order=-size`)).messages.map((m) => m.size);
    expect(bySize).toEqual([...bySize].sort((a, b) => b - a));
    const byUid = (await search(`${q}&order=uid`)).messages.map((m) => m.uid);
    expect(byUid).toEqual([...byUid].sort((a, b) => a - b));
  });

  test('pages follow nextCursor to the end, every row once, in order', async () => {
    const seen = [];
    let cursor = null;
    let pages = 0;
    do {
      const b = await search(
        `q=budget&order=-date&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(b.total).toBe(4);
      seen.push(...rows(b));
      cursor = b.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(4);
    expect(seen).toEqual(rows(await search('q=budget&order=-date&limit=10')));
  });

  test('a page resumes after its last row even when rows before it went away', async () => {
    const first = await search('q=budget&order=date&limit=2');
    expect(rows(first)).toEqual(['Work/budget review', 'INBOX/budget plan']);
    // The first row leaves the results (moved out of the searched set by deletion).
    const work = (await call('GET', '/mailboxes/Work/messages', undefined, carol)).json();
    await call(
      'POST',
      '/mailboxes/Work/flags',
      { uids: [work.messages[0].uid], add: ['\\Deleted'] },
      carol,
    );
    await call('POST', '/mailboxes/Work/expunge', null, carol);
    const next = await search(
      `q=budget&order=date&limit=2&cursor=${encodeURIComponent(first.nextCursor)}`,
    );
    expect(next.total).toBe(3);
    expect(rows(next)).toEqual(['INBOX/Re: budget', 'INBOX/Fwd: another budget']);
    expect(next.nextCursor).toBeNull();
  });

  test('a bad order or cursor is a coded 400; another user sees none of it', async () => {
    expect(errorOf(await call('GET', '/search?q=budget&order=colour', undefined, carol))[0]).toBe(
      400,
    );
    expect(errorOf(await call('GET', '/search?q=budget&cursor=%%%', undefined, carol))[0]).toBe(
      400,
    );
    expect(
      errorOf(await call('GET', '/search?q=budget&cursor=not-a-cursor', undefined, carol)),
    ).toEqual([400, 'INVALID_CURSOR']);
    const b = (await call('GET', '/search?q=budget&order=date', undefined, bob)).json();
    expect(b.total).toBe(0);
    expect(errorOf(await call('GET', '/search?q=budget&mailbox=Work', undefined, bob))).toEqual([
      404,
      'MAILBOX_NOT_FOUND',
    ]);
  });
});

describe('threads and previews', () => {
  let dana;
  beforeAll(async () => {
    dana = await t.user('dana');
    await t.mail('dana', 'INBOX', [
      msg({
        subject: 'Lunch plan',
        date: 'Mon, 04 Mar 2002 10:00:00 +0000',
        headers: ['Message-ID: <lunch@x>'],
        body: 'Shall we meet at noon?\n\n-- \nDana\n',
      }),
      msg({
        subject: 'Re: Lunch plan',
        date: 'Mon, 04 Mar 2002 11:00:00 +0000',
        headers: ['Message-ID: <lunch-2@x>', 'In-Reply-To: <lunch@x>'],
        body: 'On Mon, Dana wrote:\n> Shall we meet at noon?\n\nYes, noon works.\n',
      }),
      msg({
        subject: 'Unrelated',
        date: 'Tue, 05 Mar 2002 10:00:00 +0000',
        headers: ['Message-ID: <u@x>'],
      }),
    ]);
    // A later import: a reply that names its parent only by subject lands in another mailbox.
    await t.mail('dana', 'Sent', [
      msg({
        subject: 'RE: lunch plan',
        date: 'Mon, 04 Mar 2002 12:00:00 +0000',
        headers: ['Message-ID: <lunch-3@x>'],
      }),
    ]);
  });

  test('header rows carry a preview without quotes or signature, and a thread id', async () => {
    const rows = (await call('GET', '/mailboxes/INBOX/messages?order=uid', undefined, dana)).json()
      .messages;
    expect(rows.map((r) => r.preview)).toEqual([
      'Shall we meet at noon?',
      'Yes, noon works.',
      'Hello there.',
    ]);
    expect(rows[0].threadId).toMatch(/^[0-9a-f]{16}$/);
    expect(rows[1].threadId).toBe(rows[0].threadId);
    expect(rows[2].threadId).not.toBe(rows[0].threadId);
    const found = (await call('GET', '/search?q=noon&order=uid', undefined, dana)).json();
    expect(found.messages[0].preview).toBe('Shall we meet at noon?');
    expect(found.messages[0].threadId).toBe(rows[0].threadId);
  });

  test('GET /threads lists threads newest first with counts; a thread lists its messages across mailboxes', async () => {
    const list = (await call('GET', '/threads', undefined, dana)).json();
    expect(list.threads.map((x) => [x.subject, x.messages, x.unseen])).toEqual([
      ['Unrelated', 1, 1],
      ['Lunch plan', 3, 3],
    ]);
    expect(list.nextCursor).toBeNull();
    const id = list.threads[1].threadId;
    const one = (await call('GET', `/threads/${id}`, undefined, dana)).json();
    expect(one.messages.map((m) => [m.mailbox, m.subject])).toEqual([
      ['INBOX', 'Lunch plan'],
      ['INBOX', 'Re: Lunch plan'],
      ['Sent', 'RE: lunch plan'],
    ]);
    // Paged: one thread per page, the cursor leads to the next.
    const p1 = (await call('GET', '/threads?limit=1', undefined, dana)).json();
    expect(p1.threads).toHaveLength(1);
    const p2 = (
      await call(
        'GET',
        `/threads?limit=1&cursor=${encodeURIComponent(p1.nextCursor)}`,
        undefined,
        dana,
      )
    ).json();
    expect(p2.threads.map((x) => x.subject)).toEqual(['Lunch plan']);
    expect(p2.nextCursor).toBeNull();
    // Only threads with a message in Sent.
    const sent = (await call('GET', '/threads?mailbox=Sent', undefined, dana)).json();
    expect(sent.threads.map((x) => [x.subject, x.messages])).toEqual([['Lunch plan', 3]]);
  });

  test("another user's thread is not found; legacy backends say they cannot thread", async () => {
    const id = (await call('GET', '/threads', undefined, dana)).json().threads[0].threadId;
    expect(errorOf(await call('GET', `/threads/${id}`, undefined, bob))).toEqual([
      404,
      'THREAD_NOT_FOUND',
    ]);
    expect(
      (await call('GET', '/threads', undefined, bob))
        .json()
        .threads.every((x) => x.threadId !== id),
    ).toBe(true);
    expect(errorOf(await call('GET', '/threads?mailbox=Sent', undefined, bob))).toEqual([
      404,
      'MAILBOX_NOT_FOUND',
    ]);
    expect(errorOf(await call('GET', '/threads?cursor=zzz', undefined, dana))[0]).toBe(400);
    expect(errorOf(await call('GET', `/threads/${id}?backend=mbox`, undefined, dana))[0]).toBe(400);
  });
});
