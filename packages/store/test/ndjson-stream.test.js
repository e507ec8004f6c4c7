'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { useCliSuite } = require('@mailgate/test-support/db');
const { msg, mboxOf } = require('@mailgate/test-support/mail');
const { until, within } = require('@mailgate/test-support/waits');

// The whole-mailbox NDJSON scan reads a server-side cursor, lines built by ndjsonLine: check
// the bytes are exact JSON lines (including hostile characters), that a stream abandoned
// mid-way closes its cursor and gives its connection back without poisoning the pool, and
// that a connection lost mid-stream ends the stream with an error (review finding 1: it hung
// and its pool slot was lost for good).
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

  // Date order always reads the cursor (uid order may be served by the list cache).
  for (let i = 0; i < 12; i++) {
    const s = store.streamHeadersNdjson(user.id, mb.id, { order: 'date' });
    await firstChunk(s);
    // The cursor is still open on the server (3000 rows, one batch read so far) ...
    expect(await cursorPids(store.knex)).toHaveLength(1);
    s.destroy();
    // ... and closed once the reader is gone.
    expect(await until(async () => (await cursorPids(store.knex)).length === 0)).toBe(true);
  }
  // More aborted streams than the pool has connections: all were released or discarded.
  expect(await until(() => store.knex.client.pool.numUsed() === 0)).toBe(true);
  const boxes = await store.listMailboxes(user.id);
  expect(boxes[0]).toMatchObject({ name: 'big', total: 3000 });
});

test('a connection lost mid-stream errors the stream and frees its pool slot', async () => {
  const { store } = suite.db;
  const user = await store.getUser('nd');
  const mb = await store.getMailbox(user.id, 'big');
  const pool = store.knex.client.pool;

  // Read and killed while the reader reads.
  const s = store.streamHeadersNdjson(user.id, mb.id, { order: 'date' });
  const failed = new Promise((resolve) => s.once('error', resolve));
  await firstChunk(s);
  await terminateCursors(store.knex);
  s.resume();
  expect(await within(failed, 'the stream to fail')).toBeInstanceOf(Error);
  expect(await until(() => pool.numUsed() === 0)).toBe(true);

  // Killed while the reader stalls, then the reader goes away.
  const stalled = store.streamHeadersNdjson(user.id, mb.id, { order: 'date' });
  await firstChunk(stalled);
  await terminateCursors(store.knex);
  const closed = new Promise((resolve) => stalled.once('close', resolve));
  stalled.destroy();
  await within(closed, 'the stalled stream to close');
  expect(await until(() => pool.numUsed() === 0)).toBe(true);

  // The row iterator (IMAP and the service's header scans) fails the same way.
  const rows = store.streamHeaderRows(user.id, mb.id, { order: 'date' });
  const read = (async () => {
    let n = 0;
    for await (const row of rows) {
      if (n++ === 0) await terminateCursors(store.knex);
      expect(row.uid).toBeGreaterThan(0);
    }
    return n;
  })();
  await expect(within(read, 'the row iterator to fail')).rejects.toThrow();
  expect(await until(() => pool.numUsed() === 0)).toBe(true);

  // A row iterator left early gives its connection back too.
  for await (const row of store.streamHeaderRows(user.id, mb.id, { order: 'date' })) {
    expect(row.uid).toBeGreaterThan(0);
    break;
  }
  expect(await until(() => pool.numUsed() === 0)).toBe(true);
  expect(await cursorPids(store.knex)).toHaveLength(0);

  // The pool still answers, on fresh connections.
  const boxes = await store.listMailboxes(user.id);
  expect(boxes[0]).toMatchObject({ name: 'big', total: 3000 });
});

/** Resolves on a stream's first chunk, leaving it paused (the cursor stays open). */
function firstChunk(stream) {
  return new Promise((resolve) =>
    stream.once('data', () => {
      stream.pause();
      resolve();
    }),
  );
}

/**
 * Backends running an open header cursor: a suspended portal's session stays 'active'
 * until its Sync.
 */
async function cursorPids(knex) {
  const r = await knex.raw(
    `SELECT pid FROM pg_stat_activity
      WHERE pid <> pg_backend_pid() AND state = 'active' AND query LIKE 'SELECT m.uid, m.mailbox_id%'`,
  );
  return r.rows.map((x) => x.pid);
}

async function terminateCursors(knex) {
  const pids = await cursorPids(knex);
  expect(pids).toHaveLength(1);
  await knex.raw('SELECT pg_terminate_backend(?::int)', [pids[0]]);
}
