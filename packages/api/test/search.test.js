'use strict';

const { useApi, req } = require('./helpers');
const { inbox, archive } = require('./fixtures');

const t = useApi();
let token;
beforeAll(async () => {
  token = await t.user('alice');
  await t.mail('alice', 'INBOX', inbox);
  await t.mail('alice', 'Archive', archive);
  const flags = async (uids, add) => {
    const r = await req(t.app, token, {
      method: 'POST',
      url: '/api/v1/mailboxes/INBOX/flags',
      payload: { uids, add },
    });
    expect(r.statusCode).toBe(200);
  };
  await flags([1], ['\\Seen']);
  await flags([2], ['\\Seen', '\\Flagged']);
  await flags([4], ['\\Answered']);
});

const search = async (q, mailbox = 'INBOX') => {
  const qs = new URLSearchParams({ q });
  if (mailbox) qs.set('mailbox', mailbox);
  const r = await req(t.app, token, { url: `/api/v1/search?${qs}` });
  expect(r.statusCode).toBe(200);
  const body = r.json();
  return body.mailboxes.flatMap((m) => m.uids.map((u) => (mailbox ? u : `${m.mailbox}:${u}`)));
};

test('fixture sizes are what the size expectations assume', async () => {
  const r = await req(t.app, token, { url: '/api/v1/mailboxes/INBOX/messages?order=uid' });
  const sizes = r.json().messages.map((m) => m.size);
  expect(sizes[0]).toBeLessThan(1024);
  expect(sizes[1]).toBeGreaterThan(1024);
  expect(sizes[1]).toBeLessThan(10240);
  expect(sizes[2]).toBeLessThan(1024);
  expect(sizes[3]).toBeLessThan(1024);
  expect(sizes[4]).toBeGreaterThan(10240);
});

// Expected uids written by hand from fixtures.js.
test.each([
  // word search: whole words, case-insensitive, not substrings
  ['happy', [1]],
  ['HAPPY', [1]],
  ['"happy day"', [1]],
  ['"day happy"', []],
  ['zebrafish', [3]], // only inside an HTML-only message
  ['alert', []], // script content is not text
  ['grüße', [5]],
  ['numbers', [2, 4]],
  // substring search (IMAP SEARCH semantics)
  ['text:happy', [1, 2]], // "unhappy" in 2
  ['text:zebra', [3]],
  ['from:example', [1, 4]], // a@example.org, bob@example.net
  ['from:EXAMPLE.ORG', [1]],
  ['from:alice', [1]], // display name
  ['to:a@example', [2, 3, 5]],
  ['cc:dave', [2]],
  ['subject:quarterly', [2, 4]],
  ['subject:köln', [5]], // decoded RFC 2047
  ['body:numbers', [2, 4]],
  ['body:quarterly', []],
  ['text:quarterly', [2, 4]], // header text counts for text:
  ['text:100%', [4]], // LIKE metacharacters are literal
  ['text:sure_thing', [4]],
  ["text:O'Reilly", [4]],
  ['text:%', [4]],
  // structure, flags, dates, sizes
  ['has:attachment', [2]],
  ['is:read', [1, 2]],
  ['is:unread', [3, 4, 5]],
  ['is:flagged', [2]],
  ['is:unflagged', [1, 3, 4, 5]],
  ['is:answered', [4]],
  ['is:deleted', []],
  ['is:draft', []],
  ['before:2002-04-10', [1]],
  ['after:2002-04-10', [2, 3, 4, 5]],
  ['on:2002-04-10', [2, 3]],
  ['larger:10k', [5]],
  ['smaller:1k', [1, 3, 4]],
  ['in:INBOX', [1, 2, 3, 4, 5]],
  ['in:Archive', []], // restricted to INBOX by the mailbox parameter
  // combinations
  ['-from:example', [2, 3, 5]],
  ['from:carol OR from:eve', [2, 3]],
  ['subject:quarterly -subject:re', []], // "report" contains "re"
  ['subject:quarterly -subject:"re:"', [2]],
  ['(is:read OR is:answered) -has:attachment', [1, 4]],
  ['', [1, 2, 3, 4, 5]],
])('%s', async (q, expected) => {
  expect(await search(q)).toEqual(expected);
});

test('without a mailbox, search covers every mailbox and names it', async () => {
  expect(await search('happy', null)).toEqual(['INBOX:1', 'Archive:1']);
  expect(await search('in:Archive', null)).toEqual(['Archive:1']);
  expect(await search('from:a@example.org -in:INBOX', null)).toEqual(['Archive:1']);
});

test('search answers header rows, limited by limit, and the total', async () => {
  const r = await req(t.app, token, { url: '/api/v1/search?q=to:a@example&limit=2&order=uid' });
  const b = r.json();
  expect(b.total).toBe(3);
  expect(b.messages.map((m) => [m.mailbox, m.uid, m.subject])).toEqual([
    ['INBOX', 2, 'Quarterly report'],
    ['INBOX', 3, 'Free offer'],
  ]);
  expect(r.headers['server-timing']).toMatch(/^pg;dur=\d+\.\d+/);
});
