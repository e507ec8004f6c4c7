'use strict';

/*
 * For the tests of a data migration, run down and up again on a test database: a user made
 * the way the store made them before that migration (rows by hand, partitions named by the
 * serial id as createPartitions did), so the rows exist before the migration's `up` sees them.
 */

/**
 * Inserts user 'mig', its mailboxes and the given per-user partitions.
 * @param {import('knex').Knex} k
 * @param {{mailboxes?: string[], partitions?: string[]}} [what] mailbox names; partitioned tables
 * @returns {Promise<{id: number, boxes: number[]}>} the user's id and the mailboxes' ids, in order
 */
async function userAsBefore(k, { mailboxes = ['INBOX'], partitions = ['messages'] } = {}) {
  const id = (await k.raw("INSERT INTO users (name) VALUES ('mig') RETURNING id")).rows[0].id;
  const boxes = [];
  for (const box of mailboxes) {
    const sql = 'INSERT INTO mailboxes (user_id, name, uidvalidity) VALUES (?, ?, 1) RETURNING id';
    boxes.push((await k.raw(sql, [id, box])).rows[0].id);
  }
  for (const t of partitions) {
    await k.raw(`CREATE TABLE ${t}_u${Number(id)} PARTITION OF ${t} FOR VALUES IN (${id})`);
  }
  return { id, boxes };
}

module.exports = { userAsBefore };
