'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { useCliSuite } = require('@mailgate/test-support/db');
const { msg, mboxOf } = require('@mailgate/test-support/mail');
const { until, within } = require('@mailgate/test-support/waits');

// streamSources (export, the legacy checks) reads a server-side cursor (cursor.js): a
// connection lost mid-export fails the stream and frees its pool slot (with knex's .stream()
// the export hung for good and the slot was lost), a reader that stops early closes the
// cursor, and a whole read gives every message's bytes in uid order.
const suite = useCliSuite('sources-stream');

const QUERY = 'SELECT m.uid, m.flags, m.keywords%';

beforeAll(() => {
  const messages = [];
  for (let i = 0; i < 200; i++) {
    messages.push(msg({ subject: `s${i}`, body: `body ${i} ${'y'.repeat(2000 + i)}\n` }));
  }
  const file = path.join(suite.tmp, 'src.mbox');
  fs.writeFileSync(file, mboxOf(messages));
  expect(suite.cli(['import', 'mbox', file, '--user', 'ss', '--quiet']).code).toBe(0);
});

async function box() {
  const { store } = suite.db;
  const user = await store.getUser('ss');
  return { store, user, mb: await store.getMailbox(user.id, 'src') };
}

test('a whole read gives every message in uid order, with its bytes', async () => {
  const { store, user, mb } = await box();
  const rows = [];
  for await (const row of store.streamSources(user.id, mb.id)) rows.push(row);
  expect(rows.map((r) => r.uid)).toEqual(rows.map((_, i) => i + 1));
  expect(rows).toHaveLength(200);
  expect(Buffer.isBuffer(rows[5].raw)).toBe(true);
  expect(rows[5].raw.toString('latin1')).toContain(`body 5 ${'y'.repeat(2005)}`);
  expect(rows[5].raw_codec).toBeUndefined();
  expect(await until(() => store.knex.client.pool.numUsed() === 0)).toBe(true);
});

test('a connection lost mid-read fails the stream and frees its pool slot', async () => {
  const { store, user, mb } = await box();
  const pool = store.knex.client.pool;
  const read = (async () => {
    let n = 0;
    for await (const row of store.streamSources(user.id, mb.id)) {
      if (n++ === 0) await terminate(store.knex);
      expect(row.uid).toBeGreaterThan(0);
    }
    return n;
  })();
  await expect(within(read, 'the sources stream to fail')).rejects.toThrow();
  expect(await until(() => pool.numUsed() === 0)).toBe(true);

  // A reader that stops early closes the cursor and gives the connection back.
  for (let i = 0; i < 12; i++) {
    const s = store.streamSources(user.id, mb.id);
    for await (const row of s) {
      expect(row.uid).toBe(1);
      break;
    }
  }
  expect(await until(async () => (await pids(store.knex)).length === 0)).toBe(true);
  expect(await until(() => pool.numUsed() === 0)).toBe(true);
  // The pool still answers.
  expect((await store.listMailboxes(user.id))[0]).toMatchObject({ name: 'src', total: 200 });
});

async function pids(knex) {
  const r = await knex.raw(
    `SELECT pid FROM pg_stat_activity
      WHERE pid <> pg_backend_pid() AND state = 'active' AND query LIKE ?`,
    [QUERY],
  );
  return r.rows.map((x) => x.pid);
}

async function terminate(knex) {
  const found = await pids(knex);
  expect(found).toHaveLength(1);
  await knex.raw('SELECT pg_terminate_backend(?::int)', [found[0]]);
}
