'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { useCliSuite } = require('@mailgate/test-support/db');

// Issue 30.6: `messages.header_json` is gone, and the cold whole-mailbox NDJSON scan builds its
// lines from the header columns with the list cache's own line builder. The two answers (cold:
// a cursor over PostgreSQL; warm: the cache) must be the same bytes for hostile headers. Before,
// the cold lines were spliced from the stored fragment, with another key order (the volatile
// fields last, addresses as the parser ordered them) than the warm ones.
const suite = useCliSuite('ndjson-cold-warm');

const CRLF = (s) => s.replace(/\n/g, '\r\n');
const MESSAGES = [
  // 8-bit header bytes without a charset (latin-1), quotes, backslashes, control characters
  Buffer.concat([
    Buffer.from('From: "J'),
    Buffer.from([0xf6]),
    Buffer.from('rg \\"x\\"" <jorg@example.org>\nTo: a@example.org\nSubject: caf'),
    Buffer.from([0xe9, 0x20, 0xff, 0x01, 0x1f, 0x7f]),
    Buffer.from(' tab\there "q" back\\slash\nDate: Mon, 1 Jan 2024 10:00:00 +0000\n\nbody\n'),
  ]),
  // groups, an empty group, names with commas, encoded words with U+2028 and an emoji
  Buffer.from(
    CRLF(
      'From: =?utf-8?B?' +
        Buffer.from('Zoë \u2028 😀').toString('base64') +
        '?= <z@example.org>\n' +
        'To: undisclosed-recipients:;\nCc: Team: a@example.org, "B, b" <b@example.org>;, c@example.org\n' +
        'Subject: =?iso-8859-1?Q?=E9t=E9_</script>?=\nDate: Thu, 28 Dec 2043 01:02:03 -0800\n' +
        'Message-ID: <"odd id"@example.org>\n\nsecond body\n',
    ),
  ),
  // no From, no Date, no Subject, no To
  Buffer.from('X-Nothing: here\n\nheaderless body, a NUL \u0000 in it\n'),
  // a date that does not parse, an address without a name, an empty subject
  Buffer.from('From: bare@example.org\nTo: <only@example.org>\nSubject:\nDate: not a date\n\nx\n'),
  // a long subject folded over lines, and a name that is only spaces
  Buffer.from(
    `From: "   " <sp@example.org>\nSubject: ${'long '.repeat(300)}\n folded\nDate: 1 Jan 1970 00:00:00 GMT\n\ny\n`,
  ),
];

test('cold NDJSON (a cursor over the columns) is byte for byte the cached answer; no header_json column', async () => {
  const dir = path.join(suite.tmp, 'mh', 'odd');
  fs.mkdirSync(dir, { recursive: true });
  MESSAGES.forEach((m, i) => fs.writeFileSync(path.join(dir, String(i + 1)), m));
  const r = suite.cli(['import', 'mh', path.join(suite.tmp, 'mh'), '--user', 'cw', '--quiet']);
  expect(r.code).toBe(0);
  const { store } = suite.db;
  const user = await store.getUser('cw');
  const mb = await store.getMailbox(user.id, 'odd');
  expect(store.listCache).toBeTruthy();

  const read = async (opts) => {
    let text = '';
    for await (const chunk of store.streamHeadersNdjson(user.id, mb.id, opts)) text += chunk;
    return text;
  };
  expect(store.listCache.has(user.id, mb.id)).toBe(false);
  const cold = await read();
  const coldDate = await read({ order: 'date' });
  await store.listCache.rowsOf(store.knex, user.id, mb.id);
  expect(store.listCache.has(user.id, mb.id)).toBe(true);
  const warm = await read();

  expect(cold.split('\n')).toHaveLength(MESSAGES.length + 1);
  expect(cold).toBe(warm);
  // Date order reads PostgreSQL always: the same lines, in another order.
  expect(coldDate.split('\n').sort()).toEqual(cold.split('\n').sort());
  // And the same rows as the paged API.
  const page = await store.scanPage(user.id, mb.id, { limit: 50 });
  expect(
    cold
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l)),
  ).toEqual(page.rows);

  const cols = await store.knex.raw(
    `SELECT column_name FROM information_schema.columns
      WHERE table_name = 'messages' AND column_name = 'header_json'`,
  );
  expect(cols.rows).toEqual([]);
});
