'use strict';

const { useApi, req, ADMIN } = require('./helpers');
const { inbox } = require('./fixtures');
const { msg } = require('@mailgate/test-support/mail');

const t = useApi({ loginLimit: { max: 3, windowMs: 60000 } });
let token;
beforeAll(async () => {
  token = await t.user('alice', 'alice password 1');
  await t.mail('alice', 'INBOX', inbox);
  await t.mail('alice', 'allen-p/inbox', [msg({ subject: 'slash box' })]);
});

const get = (url, tok = token, headers) => req(t.app, tok, { url, headers });
const post = (url, payload, tok = token) => req(t.app, tok, { method: 'POST', url, payload });
const errorOf = (r) => [r.statusCode, r.json().error.code];

describe('health and docs', () => {
  test('health checks PostgreSQL without auth', async () => {
    const r = await get('/api/v1/health', null);
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ status: 'ok', db: 'ok' });
    expect(r.headers['server-timing']).toMatch(/^pg;dur=/);
  });
  test('issue 29.8: the docs page and its files carry a strict Content-Security-Policy', async () => {
    for (const url of ['/docs', '/docs/static/index.html', '/docs/static/swagger-initializer.js']) {
      const r = await get(url, null);
      const csp = r.headers['content-security-policy'];
      expect(csp).toEqual(expect.any(String));
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("object-src 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https:|validator\.swagger\.io/);
    }
  });
  test('OpenAPI document and UI at /docs', async () => {
    const doc = (await get('/docs/json', null)).json();
    expect(doc.openapi).toMatch(/^3\./);
    for (const p of [
      '/api/v1/session',
      '/api/v1/mailboxes',
      '/api/v1/mailboxes/{mailbox}/messages',
      '/api/v1/mailboxes/{mailbox}/messages/{uid}',
      '/api/v1/mailboxes/{mailbox}/messages/{uid}/raw',
      '/api/v1/mailboxes/{mailbox}/messages/{uid}/attachments/{part}',
      '/api/v1/search',
      '/api/v1/mailboxes/{mailbox}/flags',
      '/api/v1/mailboxes/{mailbox}/expunge',
    ]) {
      expect(doc.paths).toHaveProperty([p]);
    }
    expect((await get('/docs', null)).statusCode).toBeLessThan(400);
  });
  test('unknown routes are 404 with a code', async () => {
    expect(errorOf(await get('/api/v1/nope'))).toEqual([404, 'NOT_FOUND']);
  });
});

describe('auth', () => {
  test('every data route needs a valid bearer token', async () => {
    for (const url of [
      '/api/v1/mailboxes',
      '/api/v1/mailboxes/INBOX/messages',
      '/api/v1/mailboxes/INBOX/messages/1',
      '/api/v1/mailboxes/INBOX/messages/1/raw',
      '/api/v1/mailboxes/INBOX/messages/2/attachments/2',
      '/api/v1/search?q=x',
    ]) {
      for (const tok of [null, 'mg_wrong', 'garbage token']) {
        const r = await get(url, tok);
        expect(errorOf(r)).toEqual([401, 'UNAUTHORIZED']);
        expect(r.headers['www-authenticate']).toBe('Bearer');
      }
    }
    for (const url of ['/api/v1/mailboxes/INBOX/flags', '/api/v1/mailboxes/INBOX/expunge']) {
      expect(errorOf(await post(url, { uids: [1], add: ['\\Seen'] }, null))).toEqual([
        401,
        'UNAUTHORIZED',
      ]);
    }
  });

  test('login gives a working token; logout revokes it; tokens are stored hashed', async () => {
    const r = await post('/api/v1/session', { user: 'alice', password: 'alice password 1' }, null);
    expect(r.statusCode).toBe(201);
    const { token: tok, expiresAt } = r.json();
    expect(tok).toMatch(/^mg_[A-Za-z0-9_-]{43}$/);
    expect(new Date(expiresAt).getTime()).toBeGreaterThan(Date.now());
    expect((await get('/api/v1/mailboxes', tok)).statusCode).toBe(200);
    const stored = await t.db.knex('api_tokens').select('token_hash');
    expect(stored.some((s) => s.token_hash.toString('latin1').includes(tok))).toBe(false);
    const out = await req(t.app, tok, { method: 'DELETE', url: '/api/v1/session' });
    expect(out.statusCode).toBe(204);
    expect(errorOf(await get('/api/v1/mailboxes', tok))).toEqual([401, 'UNAUTHORIZED']);
  });

  test('expired tokens are refused', async () => {
    const u = await t.db.store.getUser('alice');
    const { token: tok } = await t.db.store.createToken(u.id);
    await t.db
      .knex('api_tokens')
      .update({ expires_at: new Date(Date.now() - 1000) })
      .where({
        user_id: u.id,
        token_hash: require('@mailgate/store').hashToken(tok),
      });
    expect(errorOf(await get('/api/v1/mailboxes', tok))).toEqual([401, 'UNAUTHORIZED']);
  });

  test('bad login input is 400, wrong password 401, then rate limited 429', async () => {
    expect(errorOf(await post('/api/v1/session', { user: 'alice' }, null))).toEqual([
      400,
      'INVALID_INPUT',
    ]);
    for (let i = 0; i < 3; i++) {
      expect(
        errorOf(await post('/api/v1/session', { user: 'alice', password: 'wrong' }, null)),
      ).toEqual([401, 'INVALID_CREDENTIALS']);
    }
    const r = await post('/api/v1/session', { user: 'alice', password: 'alice password 1' }, null);
    expect(errorOf(r)).toEqual([429, 'TOO_MANY_ATTEMPTS']);
    expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    // Unknown users fail the same way (no user enumeration), and are limited per user and
    // address like everyone: alice's failures do not lock them out (issue 15).
    for (let i = 0; i < 3; i++) {
      expect(
        errorOf(await post('/api/v1/session', { user: 'nobody', password: 'x' }, null)),
      ).toEqual([401, 'INVALID_CREDENTIALS']);
    }
    expect(errorOf(await post('/api/v1/session', { user: 'nobody', password: 'x' }, null))).toEqual(
      [429, 'TOO_MANY_ATTEMPTS'],
    );
  });

  test('admin token manages users; user tokens get 403, none 401', async () => {
    const body = { name: 'carl', password: 'carl password' };
    expect(errorOf(await post('/api/v1/users', body, null))).toEqual([401, 'UNAUTHORIZED']);
    expect(errorOf(await post('/api/v1/users', body, token))).toEqual([403, 'FORBIDDEN']);
    const r = await post('/api/v1/users', body, ADMIN);
    expect(r.statusCode).toBe(201);
    expect(r.json()).toMatchObject({ name: 'carl' });
    expect(errorOf(await post('/api/v1/users', body, ADMIN))).toEqual([409, 'USER_EXISTS']);
    expect(
      errorOf(await post('/api/v1/users', { name: 'bad name', password: 'x' }, ADMIN)),
    ).toEqual([400, 'INVALID_INPUT']);
    // The password rule is core's checkPassword, the CLI's too: the same code and message.
    const short = await post('/api/v1/users', { name: 'lee', password: 'short' }, ADMIN);
    expect(short.json()).toEqual({
      error: {
        code: 'INVALID_PASSWORD',
        message: 'Password not accepted: it must be at least 8 characters',
      },
    });
    expect(short.statusCode).toBe(400);
    expect(
      errorOf(await post('/api/v1/users', { name: 'lee', password: 'x'.repeat(1025) }, ADMIN)),
    ).toEqual([400, 'INVALID_PASSWORD']);
    expect(errorOf(await post('/api/v1/users', { name: 'lee' }, ADMIN))).toEqual([
      400,
      'INVALID_INPUT',
    ]);
    const tk = await post('/api/v1/users/carl/tokens', {}, ADMIN);
    expect(tk.statusCode).toBe(201);
    expect((await get('/api/v1/mailboxes', tk.json().token)).json()).toEqual({ mailboxes: [] });
    expect(errorOf(await post('/api/v1/users/nobody/tokens', {}, ADMIN))).toEqual([
      404,
      'USER_NOT_FOUND',
    ]);
  });
});

describe('mailboxes and header scans', () => {
  test('mailboxes with counts', async () => {
    const r = await get('/api/v1/mailboxes');
    expect(r.statusCode).toBe(200);
    expect(r.headers['server-timing']).toMatch(/^pg;dur=\d/);
    const boxes = r.json().mailboxes;
    expect(boxes.map((b) => b.name)).toEqual(['INBOX', 'allen-p/inbox']);
    expect(boxes[0]).toMatchObject({ total: 5, unseen: 5, uidnext: 6 });
    expect(boxes[0].uidvalidity).toBeGreaterThan(0);
  });

  test('keyset pagination by uid, both directions', async () => {
    const seen = [];
    let cursor = null;
    do {
      const r = await get(
        `/api/v1/mailboxes/INBOX/messages?order=uid&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(r.statusCode).toBe(200);
      expect(r.headers['server-timing']).toMatch(/^pg;dur=/);
      seen.push(...r.json().messages.map((m) => m.uid));
      cursor = r.json().nextCursor;
    } while (cursor);
    expect(seen).toEqual([1, 2, 3, 4, 5]);
    const desc = (await get('/api/v1/mailboxes/INBOX/messages?order=-uid&limit=3')).json();
    expect(desc.messages.map((m) => m.uid)).toEqual([5, 4, 3]);
    const next = await get(`/api/v1/mailboxes/INBOX/messages?order=-uid&cursor=${desc.nextCursor}`);
    expect(next.json().messages.map((m) => m.uid)).toEqual([2, 1]);
  });

  test('date order pages by Date header, then uid', async () => {
    const uids = [];
    let cursor = null;
    do {
      const r = await get(
        `/api/v1/mailboxes/INBOX/messages?order=-date&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      uids.push(...r.json().messages.map((m) => m.uid));
      cursor = r.json().nextCursor;
    } while (cursor);
    expect(uids).toEqual([5, 4, 3, 2, 1]);
  });

  test('header rows carry the contract fields', async () => {
    const m = (await get('/api/v1/mailboxes/INBOX/messages?order=uid&limit=1')).json().messages[0];
    expect(m).toEqual({
      uid: 1,
      from: { name: 'Alice Example', address: 'a@example.org' },
      to: [{ name: 'Bob', address: 'bob@example.net' }],
      cc: [],
      subject: 'Happy birthday',
      date: '2002-03-05T10:00:00.000Z',
      internalDate: expect.any(String),
      size: inbox[0].length,
      flags: [],
      keywords: [],
      hasAttachments: false,
      messageId: null,
      modseq: expect.any(Number),
      preview: 'Wishing you a happy day.',
      threadId: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
  });

  test('NDJSON streams the whole mailbox with the same rows', async () => {
    const page = (await get('/api/v1/mailboxes/INBOX/messages?order=uid&limit=100')).json()
      .messages;
    const r = await get('/api/v1/mailboxes/INBOX/messages', token, {
      accept: 'application/x-ndjson',
    });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/x-ndjson/);
    expect(r.headers['server-timing']).toMatch(/^pg;dur=/);
    const lines = r.body.trimEnd().split('\n').map(JSON.parse);
    expect(lines).toEqual(page);
    const desc = await get('/api/v1/mailboxes/INBOX/messages?order=-date', token, {
      accept: 'application/x-ndjson',
    });
    expect(
      desc.body
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l).uid),
    ).toEqual([5, 4, 3, 2, 1]);
  });

  test('view=list: the list view of the same rows, paged and as NDJSON in every order', async () => {
    const full = (await get('/api/v1/mailboxes/INBOX/messages?order=uid&limit=100')).json()
      .messages;
    const project = (m) => ({
      uid: m.uid,
      from: m.from,
      subject: m.subject,
      date: m.date,
      internalDate: m.internalDate,
      size: m.size,
      flags: m.flags,
      keywords: m.keywords,
      hasAttachments: m.hasAttachments,
      modseq: m.modseq,
    });
    const page = await get('/api/v1/mailboxes/INBOX/messages?order=uid&limit=2&view=list');
    expect(page.json().messages).toEqual(full.slice(0, 2).map(project));
    expect(page.json().messages[0]).not.toHaveProperty('to');
    const nd = async (order) => {
      const r = await get(`/api/v1/mailboxes/INBOX/messages?view=list&order=${order}`, token, {
        accept: 'application/x-ndjson',
      });
      expect(r.statusCode).toBe(200);
      expect(r.headers['content-type']).toMatch(/^application\/x-ndjson/);
      return r.body.trimEnd().split('\n').map(JSON.parse);
    };
    expect(await nd('uid')).toEqual(full.map(project));
    expect(await nd('-uid')).toEqual(full.map(project).reverse());
    const byDate = (await get('/api/v1/mailboxes/INBOX/messages?order=-date&limit=100')).json()
      .messages;
    expect(await nd('-date')).toEqual(byDate.map(project));
    const missing = await get('/api/v1/mailboxes/Nope/messages?view=list', token, {
      accept: 'application/x-ndjson',
    });
    expect(errorOf(missing)).toEqual([404, 'MAILBOX_NOT_FOUND']);
    expect(errorOf(await get('/api/v1/mailboxes/INBOX/messages?view=tiny'))[0]).toBe(400);
  });

  test('mailbox names with a slash work when encoded', async () => {
    const r = await get('/api/v1/mailboxes/allen-p%2Finbox/messages');
    expect(r.statusCode).toBe(200);
    expect(r.json().messages[0].subject).toBe('slash box');
  });

  test('errors: unknown mailbox, bad params', async () => {
    expect(errorOf(await get('/api/v1/mailboxes/Nope/messages'))).toEqual([
      404,
      'MAILBOX_NOT_FOUND',
    ]);
    expect(errorOf(await get('/api/v1/mailboxes/INBOX/messages?limit=0'))).toEqual([
      400,
      'INVALID_PARAMETER',
    ]);
    expect(errorOf(await get('/api/v1/mailboxes/INBOX/messages?order=size'))).toEqual([
      400,
      'INVALID_PARAMETER',
    ]);
    // This app has no ELASTICSEARCH_URL: es is refused with its code, never answered by pg.
    expect(errorOf(await get('/api/v1/mailboxes/INBOX/messages?backend=es'))).toEqual([
      400,
      'ES_NOT_CONFIGURED',
    ]);
    expect(errorOf(await get('/api/v1/mailboxes/INBOX/messages?backend=oracle'))).toEqual([
      400,
      'INVALID_PARAMETER',
    ]);
    const c = (await get('/api/v1/mailboxes/INBOX/messages?limit=1')).json().nextCursor;
    expect(errorOf(await get(`/api/v1/mailboxes/INBOX/messages?order=date&cursor=${c}`))).toEqual([
      400,
      'INVALID_CURSOR',
    ]);
  });
});

describe('messages', () => {
  test('one message: headers, text, sanitized html, attachments', async () => {
    const r = await get('/api/v1/mailboxes/INBOX/messages/2');
    expect(r.statusCode).toBe(200);
    expect(r.headers['server-timing']).toMatch(/^pg;dur=/);
    const m = r.json();
    expect(m).toMatchObject({ mailbox: 'INBOX', uid: 2, subject: 'Quarterly report' });
    expect(m.text).toContain('unhappy numbers');
    expect(m.headers).toContainEqual({ name: 'Cc', value: 'Dave <dave@corp.test>' });
    expect(m.attachments).toEqual([
      expect.objectContaining({
        part: '2',
        contentType: 'application/pdf',
        filename: 'report.pdf',
      }),
    ]);
    const h = (await get('/api/v1/mailboxes/INBOX/messages/3')).json();
    expect(h.html).toContain('zebrafish');
    expect(h.html).not.toContain('script');
  });

  test('raw download is byte-identical', async () => {
    const r = await get('/api/v1/mailboxes/INBOX/messages/5/raw');
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('message/rfc822');
    expect(r.rawPayload.equals(inbox[4])).toBe(true);
    expect(r.headers['server-timing']).toMatch(/^pg;dur=/);
  });

  test('attachment download: content, type, file name', async () => {
    const r = await get('/api/v1/mailboxes/INBOX/messages/2/attachments/2');
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('application/pdf');
    expect(r.headers['content-disposition']).toBe(
      `attachment; filename="report.pdf"; filename*=UTF-8''report.pdf`,
    );
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect(r.rawPayload.equals(Buffer.alloc(1500, 'P'))).toBe(true);
  });

  test('errors: unknown uid, unknown part, bad uid, bad part', async () => {
    expect(errorOf(await get('/api/v1/mailboxes/INBOX/messages/99'))).toEqual([
      404,
      'MESSAGE_NOT_FOUND',
    ]);
    expect(errorOf(await get('/api/v1/mailboxes/INBOX/messages/99/raw'))).toEqual([
      404,
      'MESSAGE_NOT_FOUND',
    ]);
    expect(errorOf(await get('/api/v1/mailboxes/INBOX/messages/2/attachments/7'))).toEqual([
      404,
      'ATTACHMENT_NOT_FOUND',
    ]);
    for (const u of ['0', '-1', 'abc', '1.5', '99999999999999999999']) {
      expect(errorOf(await get(`/api/v1/mailboxes/INBOX/messages/${u}`))).toEqual([
        400,
        'INVALID_PARAMETER',
      ]);
    }
    expect(errorOf(await get('/api/v1/mailboxes/INBOX/messages/2/attachments/..%2F1'))).toEqual([
      400,
      'INVALID_PARAMETER',
    ]);
  });
});

describe('flags and expunge', () => {
  test('add and remove by uids; modseq bumps only on change', async () => {
    const before = (await get('/api/v1/mailboxes')).json().mailboxes[0].highestModseq;
    const r = await post('/api/v1/mailboxes/INBOX/flags', {
      uids: [1, 2, 99],
      add: ['\\Seen', '$Work'],
    });
    expect(r.statusCode).toBe(200);
    expect(r.headers['server-timing']).toMatch(/^pg;dur=/);
    const b = r.json();
    expect(b.matched).toBe(2);
    expect(b.changed).toEqual([
      { uid: 1, flags: ['\\Seen'], keywords: ['$Work'], modseq: before + 1 },
      { uid: 2, flags: ['\\Seen'], keywords: ['$Work'], modseq: before + 1 },
    ]);
    expect(b.highestModseq).toBe(before + 1);
    // The same change again changes nothing and keeps the modseq.
    const again = (
      await post('/api/v1/mailboxes/INBOX/flags', { uids: [1, 2], add: ['\\Seen'] })
    ).json();
    expect(again).toEqual({ matched: 2, changed: [], highestModseq: before + 1 });
    const rm = (
      await post('/api/v1/mailboxes/INBOX/flags', { uids: [2], remove: ['\\Seen', '$Work'] })
    ).json();
    expect(rm.changed).toEqual([{ uid: 2, flags: [], keywords: [], modseq: before + 2 }]);
    const boxes = (await get('/api/v1/mailboxes')).json().mailboxes;
    expect(boxes[0]).toMatchObject({ unseen: 4, highestModseq: before + 2 });
  });

  test('by query', async () => {
    const r = await post('/api/v1/mailboxes/INBOX/flags', {
      q: 'subject:quarterly',
      add: ['\\Flagged'],
    });
    expect(r.json().changed.map((c) => c.uid)).toEqual([2, 4]);
    expect(
      errorOf(await post('/api/v1/mailboxes/INBOX/flags', { q: 'from:', add: ['x'] })),
    ).toEqual([400, 'INVALID_QUERY']);
  });

  test('flag errors', async () => {
    const bad = [
      {},
      { uids: [1] },
      { uids: [1], q: 'x', add: ['\\Seen'] },
      { uids: [], add: ['\\Seen'] },
      { uids: [1], add: ['\\Recent'] },
      { uids: [1], add: ['two words'] },
      { uids: ['x'], add: ['\\Seen'] },
      { uids: [1], add: ['\\Seen'], extra: 1 },
    ];
    for (const b of bad) {
      expect(errorOf(await post('/api/v1/mailboxes/INBOX/flags', b))).toEqual([
        400,
        'INVALID_INPUT',
      ]);
    }
    expect(
      errorOf(await post('/api/v1/mailboxes/Nope/flags', { uids: [1], add: ['\\Seen'] })),
    ).toEqual([404, 'MAILBOX_NOT_FOUND']);
  });

  test('expunge: only \\Deleted messages, hidden at once, purged in the background', async () => {
    await t.mail('alice', 'Trash', [
      msg({ subject: 't1' }),
      msg({ subject: 't2' }),
      msg({ subject: 't3' }),
    ]);
    // Nothing flagged \Deleted: nothing expunged.
    expect((await post('/api/v1/mailboxes/Trash/expunge', {})).json().expunged).toEqual([]);
    await post('/api/v1/mailboxes/Trash/flags', { uids: [1, 2, 3], add: ['\\Deleted'] });
    const r = await post('/api/v1/mailboxes/Trash/expunge', { uids: [1, 2] });
    expect(r.statusCode).toBe(200);
    expect(r.headers['server-timing']).toMatch(/^pg;dur=/);
    expect(r.json().expunged).toEqual([1, 2]);
    const left = (await get('/api/v1/mailboxes/Trash/messages')).json().messages;
    expect(left.map((m) => m.uid)).toEqual([3]);
    expect(errorOf(await get('/api/v1/mailboxes/Trash/messages/1'))).toEqual([
      404,
      'MESSAGE_NOT_FOUND',
    ]);
    expect((await get('/api/v1/search?q=subject:t1')).json().total).toBe(0);
    await t.app.purger.idle();
    const u = await t.db.store.getUser('alice');
    const mb = await t.db.store.getMailbox(u.id, 'Trash');
    const rows = await t.db.knex('messages').where({ user_id: u.id, mailbox_id: mb.id });
    expect(rows.map((x) => Number(x.uid))).toEqual([3]);
    const src = await t.db.knex('message_sources').where({ user_id: u.id, mailbox_id: mb.id });
    expect(src.map((x) => Number(x.uid))).toEqual([3]);
    // Without uids: every \Deleted message.
    expect((await post('/api/v1/mailboxes/Trash/expunge', null)).json().expunged).toEqual([3]);
    expect(errorOf(await post('/api/v1/mailboxes/Nope/expunge', {}))).toEqual([
      404,
      'MAILBOX_NOT_FOUND',
    ]);
    expect(errorOf(await post('/api/v1/mailboxes/Trash/expunge', { uids: 'all' }))).toEqual([
      400,
      'INVALID_INPUT',
    ]);
  });
});

describe('hostile input: 4xx with a code, never 500', () => {
  const cases = [
    ['/api/v1/search?q=' + encodeURIComponent("'; DROP TABLE messages; SELECT"), 200],
    ['/api/v1/search?q=' + encodeURIComponent('text:"\' OR 1=1 --" subject:\'\\'), 200],
    ['/api/v1/search?q=' + encodeURIComponent("'; DROP TABLE messages; --"), 400], // lone -
    ['/api/v1/search?q=' + encodeURIComponent('a'.repeat(2500)), 400],
    ['/api/v1/search?q=' + 'a'.repeat(5000), 400],
    ['/api/v1/search?q=' + encodeURIComponent('('.repeat(60)), 400],
    ['/api/v1/search?q=%FF%FE', 400],
    ['/api/v1/search?q=%C0%AF', 400],
    ['/api/v1/search?q=%', 400],
    ['/api/v1/search?q=%00', 400],
    ['/api/v1/search?mailbox=%00', 400],
    ['/api/v1/search?limit=1e99', 400],
    ['/api/v1/search?limit=-1', 400],
    ['/api/v1/search?q=x&q=y', 400],
    ['/api/v1/mailboxes/%FF/messages', 400],
    ['/api/v1/mailboxes/%00/messages', 400],
    ['/api/v1/mailboxes/' + 'x'.repeat(600) + '/messages', 400],
    ['/api/v1/mailboxes/INBOX/messages?limit=99999999999999999999', 400],
    ['/api/v1/mailboxes/INBOX/messages?cursor=%27%3B--', 400],
    ['/api/v1/mailboxes/INBOX/messages?cursor=eyJvIjoidWlkIiwidSI6LTF9', 400],
    ['/api/v1/mailboxes/INBOX/messages?cursor=bm90IGpzb24', 400],
    ['/api/v1/mailboxes/INBOX/messages?cursor=' + 'A'.repeat(600), 400],
    ['/api/v1/mailboxes/INBOX/messages?cursor=eyJvIjoidWlkIiwidSI6IjEgT1IgMT0xIn0', 400],
  ];
  test.each(cases)('%s', async (url, status) => {
    const r = await get(url);
    expect(r.statusCode).toBe(status);
    if (status >= 400) {
      expect(r.json().error.code).toMatch(/^[A-Z_]+$/);
      expect(r.body).not.toMatch(/SELECT|stack|node_modules/i);
    }
  });

  test('bodies: invalid JSON, wrong type, too large, invalid UTF-8', async () => {
    const send = (payload, type = 'application/json') =>
      req(t.app, token, {
        method: 'POST',
        url: '/api/v1/mailboxes/INBOX/flags',
        payload,
        headers: { 'content-type': type },
      });
    expect(errorOf(await send('{"uids": [1,'))).toEqual([400, 'INVALID_INPUT']);
    expect(errorOf(await send('<uids/>', 'application/xml'))).toEqual([
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ]);
    expect(errorOf(await send(JSON.stringify({ q: 'x'.repeat(2 * 1024 * 1024) })))).toEqual([
      413,
      'PAYLOAD_TOO_LARGE',
    ]);
    const bad = Buffer.concat([
      Buffer.from('{"q":"subject:'),
      Buffer.from([0xff, 0xfe, 0xc0]),
      Buffer.from('","add":["\\\\Seen"]}'),
    ]);
    expect((await send(bad)).statusCode).toBeLessThan(500);
    const nul = await send(JSON.stringify({ q: 'subject:\u0000', add: ['\\Seen'] }));
    expect(errorOf(nul)).toEqual([400, 'INVALID_QUERY']);
  });

  test('the messages table survived', async () => {
    expect((await get('/api/v1/mailboxes')).json().mailboxes[0].name).toBe('INBOX');
  });
});
