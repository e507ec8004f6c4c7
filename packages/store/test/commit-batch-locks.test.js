'use strict';

const { createTestDatabase } = require('@mailgate/test-support/db');

/*
 * Lock order of an import batch's commit against APPEND/COPY (real PostgreSQL). APPEND and
 * COPY (store mailbox-ops.js) take the user's thread advisory lock, then the mailbox row
 * (UIDNEXT). A batch that keeps upstream UIDs raises the mailbox's UIDNEXT in its transaction;
 * had it done that before waiting for the thread lock, it would hold the row an APPEND waits
 * for while waiting for the lock that APPEND holds: a deadlock (PostgreSQL aborts one of the
 * two after deadlock_timeout; the import or the client's APPEND fails).
 */

// pg_advisory_xact_lock(int, int) namespace of the store's thread stage ('thrd', thread-ops.js).
const THREAD_LOCK = 0x74687264;

describe('commitBatch with kept uids and a concurrent APPEND', () => {
  let db;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  test('the batch waits for the thread lock without holding the mailbox row: no deadlock', async () => {
    const user = await db.store.createUser('locks');
    await db.store.createMailbox(user.id, 'INBOX');
    const box = await db.store.getMailbox(user.id, 'INBOX');
    const start = Number(box.uidnext);
    // An APPEND's first step: the thread lock, held in its transaction.
    const append = await db.knex.transaction();
    let batch;
    try {
      await append.raw('SELECT pg_advisory_xact_lock(?, ?)', [THREAD_LOCK, user.id]);
      const plan = {
        uidFloors: new Map([[box.id, start + 50]]),
        msgRows: [],
        srcRows: [],
        imported: 0,
        duplicates: 0,
      };
      batch = db.store.commitBatch(user.id, plan, { quarantined: [] });
      batch.catch(() => {}); // awaited below
      // Ordering only: let the batch run up to its lock wait before the APPEND goes on.
      await new Promise((r) => setTimeout(r, 300));
      // The APPEND's next step: the mailbox row (UIDNEXT).
      await append.raw('UPDATE mailboxes SET uidnext = uidnext + 1 WHERE id = ? AND user_id = ?', [
        box.id,
        user.id,
      ]);
      await append.commit();
    } catch (err) {
      await append.rollback().catch(() => {});
      throw err;
    }
    await batch;
    const after = await db.store.getMailbox(user.id, 'INBOX');
    expect(Number(after.uidnext)).toBe(start + 50);
  });
});
