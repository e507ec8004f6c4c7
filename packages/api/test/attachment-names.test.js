'use strict';

const { useApi, req } = require('./helpers');

// Issue 29.8: attachment file names kept `../` and the RLO character (U+202E), in the API's
// attachment list and in the download's Content-Disposition.
const t = useApi();
let token;

const RAW = Buffer.from(
  [
    'From: a@example.org',
    'To: b@example.org',
    'Subject: names',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b"',
    '',
    '--b',
    'Content-Type: text/plain',
    '',
    'see attached',
    '--b',
    'Content-Type: application/octet-stream',
    "Content-Disposition: attachment; filename*=UTF-8''..%2F..%2Fhome%2Fevil%E2%80%AEfdp.exe",
    '',
    'MZ',
    '--b',
    'Content-Type: application/octet-stream; name="..\\\\..\\\\..\\\\win.ini"',
    'Content-Disposition: attachment',
    '',
    'x',
    '--b--',
    '',
  ].join('\n'),
);

beforeAll(async () => {
  token = await t.user('alice');
  await t.mail('alice', 'INBOX', [RAW]);
});

test('the attachment list names files without path segments or bidi controls', async () => {
  const r = await req(t.app, token, { url: '/api/v1/mailboxes/INBOX/messages/1' });
  expect(r.statusCode).toBe(200);
  const names = r.json().attachments.map((a) => a.filename);
  expect(names).toEqual(['evilfdp.exe', 'win.ini']);
});

test('Content-Disposition of a download carries the same clean name', async () => {
  const list = (await req(t.app, token, { url: '/api/v1/mailboxes/INBOX/messages/1' })).json();
  for (const a of list.attachments) {
    const r = await req(t.app, token, {
      url: `/api/v1/mailboxes/INBOX/messages/1/attachments/${a.part}`,
    });
    expect(r.statusCode).toBe(200);
    const cd = r.headers['content-disposition'];
    expect(cd).toContain(`filename="${a.filename}"`);
    expect(cd).not.toMatch(/\.\.|%2F|%5C|%E2%80%AE|\u202e/i);
  }
});
