'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { createTestDatabase, runCli } = require('./support/db');
const { msg, mboxOf } = require('./support/mail');
const { setup, req } = require('../packages/api/test/helpers');

// Issue 11 defects: an unknown query operator (`foo:bar`) and `in:` of a mailbox that does
// not exist answered 0 hits silently. Now: INVALID_QUERY, exit 2 in the CLI, 400 in the API.
const BAD = ['foo:bar', 'in:NoSuchBox subject:hello'];

describe('bad queries are coded errors: CLI exit 2', () => {
  let db;
  let tmp;
  beforeAll(async () => {
    db = await createTestDatabase();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-qe-'));
    const file = path.join(tmp, 'in.mbox');
    fs.writeFileSync(file, mboxOf([msg({ subject: 'hello' })]));
    const r = runCli(['import', 'mbox', file, '--user', 'qe', '--mailbox', 'INBOX'], {
      url: db.url,
    });
    expect(r.code).toBe(0);
  });
  afterAll(async () => {
    await db.drop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  test.each(BAD)('mailgate search %s', (q) => {
    const r = runCli(['search', q, '--user', 'qe', '--json'], { url: db.url });
    expect(r.code).toBe(2);
    expect(r.json).toEqual({ error: { code: 'INVALID_QUERY', message: expect.any(String) } });
    const ok = runCli(['search', 'in:INBOX subject:hello', '--user', 'qe', '--json'], {
      url: db.url,
    });
    expect(ok.code).toBe(0);
    expect(ok.json.total).toBe(1);
  });
});

describe('bad queries are coded errors: API 400', () => {
  let t;
  let token;
  beforeAll(async () => {
    t = await setup();
    token = await t.user('qa');
    await t.mail('qa', 'INBOX', [msg({ subject: 'hello' })]);
  });
  afterAll(() => t.close());

  test.each(BAD)('GET /search?q=%s', async (q) => {
    const r = await req(t.app, token, {
      method: 'GET',
      url: `/api/v1/search?q=${encodeURIComponent(q)}`,
    });
    expect(r.statusCode).toBe(400);
    expect(r.json().error.code).toBe('INVALID_QUERY');
  });

  test('flags by a query with a missing in: mailbox is a 400 too', async () => {
    const r = await req(t.app, token, {
      method: 'POST',
      url: '/api/v1/mailboxes/INBOX/flags',
      payload: { q: 'in:Nope', add: ['\\Seen'] },
    });
    expect(r.statusCode).toBe(400);
    expect(r.json().error.code).toBe('INVALID_QUERY');
  });
});
