'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { useCliSuite } = require('@mailgate/test-support/db');
const { msg, mboxOf } = require('@mailgate/test-support/mail');
const { useApi, req } = require('../packages/api/test/helpers');

// Issue 11 defects: an unknown query operator (`foo:bar`) and `in:` of a mailbox that does
// not exist answered 0 hits silently. Now: INVALID_QUERY, exit 2 in the CLI, 400 in the API.
const BAD = ['foo:bar', 'in:NoSuchBox subject:hello'];

describe('bad queries are coded errors: CLI exit 2', () => {
  const ctx = useCliSuite('qe');
  beforeAll(async () => {
    const file = path.join(ctx.tmp, 'in.mbox');
    fs.writeFileSync(file, mboxOf([msg({ subject: 'hello' })]));
    const r = ctx.cli(['import', 'mbox', file, '--user', 'qe', '--mailbox', 'INBOX']);
    expect(r.code).toBe(0);
  });

  test.each(BAD)('mailgate search %s', (q) => {
    const r = ctx.cli(['search', q, '--user', 'qe', '--json']);
    expect(r.code).toBe(2);
    expect(r.json).toEqual({ error: { code: 'INVALID_QUERY', message: expect.any(String) } });
    const ok = ctx.cli(['search', 'in:INBOX subject:hello', '--user', 'qe', '--json']);
    expect(ok.code).toBe(0);
    expect(ok.json.total).toBe(1);
  });
});

describe('bad queries are coded errors: API 400', () => {
  const t = useApi();
  let token;
  beforeAll(async () => {
    token = await t.user('qa');
    await t.mail('qa', 'INBOX', [msg({ subject: 'hello' })]);
  });

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
