'use strict';

/*
 * An empty source folder keeps its UIDVALIDITY (import-ops.js raiseKeptUidNext): with no
 * message there is no batch to adopt it (kept-uids.js), so a migrated empty folder came out
 * with a UIDVALIDITY of the store's own and a client that knew it upstream saw it change
 * (found by the 137-account fleet run: motley-m's empty `ene_portland`). Only a mailbox that
 * never handed out a uid takes the source's value.
 */

const { PgStore } = require('@mailgate/store');
const { createTestDatabase } = require('@mailgate/test-support/db');

let db;
let store;
beforeAll(async () => {
  db = await createTestDatabase();
  store = new PgStore(db.knex);
});
afterAll(() => db && db.drop());

test('an empty mailbox takes the source UIDVALIDITY; one that handed out uids keeps its own', async () => {
  const u = await store.createUser('motley');
  const empty = await store.ensureMailbox(u.id, 'ene_portland');
  expect(await store.raiseKeptUidNext(u.id, empty.id, 1795816484, 1, null)).toBe(true);
  expect(Number((await store.getMailbox(u.id, 'ene_portland')).uidvalidity)).toBe(1795816484);

  const used = await store.ensureMailbox(u.id, 'used');
  await db.knex('mailboxes').where({ id: used.id }).update({ uidnext: 5 });
  const own = Number((await store.getMailbox(u.id, 'used')).uidvalidity);
  expect(await store.raiseKeptUidNext(u.id, used.id, 1795816484, 1, null)).toBe(false);
  expect(Number((await store.getMailbox(u.id, 'used')).uidvalidity)).toBe(own);
});
