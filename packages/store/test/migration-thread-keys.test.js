'use strict';

const { useTestDatabase } = require('@mailgate/test-support/db');

/*
 * migrations/20261129340100_thread_keys_key.js on a database whose thread_keys already holds
 * rows, duplicates among them: one row per (user, key, mailbox, uid) is kept, the primary key
 * (the replica identity Citus's logical shard moves need) refuses another, the mailbox index is
 * there; the way down gives the old key index back. Runs on a single PostgreSQL and on Citus
 * (the migration is after the distribution: thread_keys is distributed there).
 */
const suite = useTestDatabase();

const rows = async (k) =>
  (
    await k.raw(
      `SELECT user_id, encode(key, 'hex') AS key, mailbox_id, uid::int AS uid FROM thread_keys
        ORDER BY 1, 2, 3, 4`,
    )
  ).rows;
const indexes = async (k) =>
  (
    await k.raw(`SELECT indexname FROM pg_indexes WHERE tablename = 'thread_keys' ORDER BY 1`)
  ).rows.map((r) => r.indexname);

test('duplicates folded and a primary key on the way up; the key index back on the way down', async () => {
  const k = suite.db.knex;
  const name = { name: '20261129340100_thread_keys_key.js' };
  await k.migrate.down(name);
  expect(await indexes(k)).toEqual(['thread_keys_key_idx']);
  await k.raw(`INSERT INTO thread_keys (user_id, key, mailbox_id, uid) VALUES
    (1, '\\x01', 1, 1), (1, '\\x01', 1, 1), (1, '\\x01', 1, 1),
    (1, '\\x02', 1, 1), (1, '\\x01', 1, 2), (2, '\\x01', 1, 1), (2, '\\x01', 1, 1)`);

  await k.migrate.up(name);
  expect(await rows(k)).toEqual([
    { user_id: 1, key: '01', mailbox_id: 1, uid: 1 },
    { user_id: 1, key: '01', mailbox_id: 1, uid: 2 },
    { user_id: 1, key: '02', mailbox_id: 1, uid: 1 },
    { user_id: 2, key: '01', mailbox_id: 1, uid: 1 },
  ]);
  expect(await indexes(k)).toEqual(['thread_keys_mailbox_idx', 'thread_keys_pkey']);
  await expect(
    k.raw(`INSERT INTO thread_keys (user_id, key, mailbox_id, uid) VALUES (1, '\\x02', 1, 1)`),
  ).rejects.toMatchObject({ code: '23505' });

  await k.migrate.down(name);
  expect(await indexes(k)).toEqual(['thread_keys_key_idx']);
  await k.migrate.up(name);
  expect(await indexes(k)).toEqual(['thread_keys_mailbox_idx', 'thread_keys_pkey']);
});
