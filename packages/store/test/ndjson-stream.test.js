'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { useCliSuite } = require('@mailgate/test-support/db');
const { msg, mboxOf } = require('@mailgate/test-support/mail');

// The whole-mailbox NDJSON scan streams COPY output: check the bytes are exact JSON lines
// (including hostile characters) and that a stream abandoned mid-way gives its connection
// back without poisoning the pool.
const suite = useCliSuite('ndjson');

test('NDJSON lines parse, keep order, and an aborted stream leaves the pool healthy', async () => {
  const messages = [];
  for (let i = 0; i < 3000; i++) {
    messages.push(
      msg({
        subject: `m${i} "quoted" back\\slash tab\there ${'x'.repeat(i % 50)}`,
        body: `b${i}\n`,
      }),
    );
  }
  const file = path.join(suite.tmp, 'big.mbox');
  fs.writeFileSync(file, mboxOf(messages));
  expect(suite.cli(['import', 'mbox', file, '--user', 'nd', '--quiet']).code).toBe(0);
  const { store } = suite.db;
  const user = await store.getUser('nd');
  const mb = await store.getMailbox(user.id, 'big');

  let text = '';
  for await (const chunk of store.streamHeadersNdjson(user.id, mb.id)) text += chunk;
  const rows = text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
  expect(rows).toHaveLength(3000);
  expect(rows.map((r) => r.uid)).toEqual(rows.map((_, i) => i + 1));
  expect(rows[7].subject).toBe(`m7 "quoted" back\\slash tab\there ${'x'.repeat(7)}`);
  // Same row shape as the paged scan.
  const page = await store.scanPage(user.id, mb.id, { limit: 5 });
  expect(rows.slice(0, 5)).toEqual(page.rows);

  for (let i = 0; i < 12; i++) {
    const s = store.streamHeadersNdjson(user.id, mb.id);
    await new Promise((resolve) => s.once('data', resolve));
    s.destroy();
  }
  // More aborted streams than the pool has connections: all were released or discarded.
  const boxes = await store.listMailboxes(user.id);
  expect(boxes[0]).toMatchObject({ name: 'big', total: 3000 });
});
