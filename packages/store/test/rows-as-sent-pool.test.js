'use strict';

// A list view's packed read (rowsAsSent) must not hold a pooled connection while the IMAP
// session writes to a slow or non-reading client: a few such clients took the whole pool from
// every other user (review finding F4, 2026-11-28; this test failed before the fix).

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { PgStore } = require('@mailgate/store');
const { createTestDatabase } = require('@mailgate/test-support/db');
const { msg, importInbox } = require('@mailgate/test-support/mail');
const { until } = require('@mailgate/test-support/waits');

describe('rowsAsSent and the pool', () => {
  let db;
  let tmp;
  let store;
  let user;
  let mb;
  const N = 1200;

  beforeAll(async () => {
    db = await createTestDatabase();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-ras-'));
    store = new PgStore(db.knex, { listCacheRows: 0 });
    const list = [];
    for (let i = 1; i <= N; i++) list.push(msg({ subject: `s ${i}`, body: `b ${i}\n` }));
    ({ user, inbox: mb } = await importInbox(store, path.join(tmp, 'box.mbox'), list, 'ras'));
  }, 120000);
  afterAll(async () => {
    await db.drop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('the connection goes back to the pool once PostgreSQL has sent the rows, not after the consumer', async () => {
    const pool = db.knex.client.pool;
    let release;
    const stalled = new Promise((r) => {
      release = r;
    });
    let first = false;
    const parts = [];
    const read = store.getImapFieldsRange(user.id, mb.id, 1, N, 'fields', {
      onPart: async (part) => {
        parts.push(part);
        first = true;
        await stalled; // the session waiting for a client that does not read (up to 60 s)
      },
    });
    try {
      expect(await until(() => first)).toBe(true);
      // The consumer is stuck on the first part: the connection comes back all the same, once
      // PostgreSQL has sent the rest.
      expect(await until(() => pool.numUsed() === 0)).toBe(true);
      expect(first).toBe(true);
    } finally {
      release();
    }
    // Every part still reaches the consumer, in order, after the connection went back.
    await read;
    expect(parts.length).toBeGreaterThan(1);
  }, 60000);
});
