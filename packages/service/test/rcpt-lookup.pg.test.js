'use strict';

const { useServiceSuite } = require('@mailgate/test-support/db');
const { onCitus } = require('@mailgate/test-support/skip');

/*
 * The recipient's lookup at every LMTP RCPT (issue 32: CPU per delivery; service delivery.js
 * resolve → store findUser): one named statement of the prepared reads' pool instead of knex's
 * builder and an unnamed statement, read fresh every time: a user deleted, renamed or routed to
 * `proxy` a moment ago is never delivered to from a stale answer.
 */
describe('RCPT lookup: one named statement, never stale', () => {
  const ctx = useServiceSuite('rcpt-lookup');
  let service;

  beforeAll(() => {
    ({ service } = ctx);
  });

  /** The statements the store sends during `step`, with the name of a named one. */
  async function sent(step) {
    const knex = service.store.knex;
    const seen = [];
    const on = (q) => seen.push({ sql: q.sql, name: (q.options && q.options.name) || null });
    knex.on('query', on);
    try {
      return { result: await step(), seen };
    } finally {
      knex.removeListener('query', on);
    }
  }

  test('a recipient is resolved by one statement, a named one on a single PostgreSQL', async () => {
    await service.users.create('rena', {});
    const { result, seen } = await sent(() => service.delivery.resolve('rena@example.org'));
    expect(result.user.name).toBe('rena');
    expect(seen).toHaveLength(1);
    expect(seen[0].sql).toMatch(/FROM\s+"?users"?/i);
    // On Citus prepared reads are off (store citus.js point 8): knex's statement, unnamed.
    expect(seen[0].name).toBe(onCitus() ? null : 'mg_user_by_name');
    // An unknown address is the same one statement, and USER_NOT_FOUND.
    const unknown = await sent(() =>
      service.delivery.resolve('nobody-here@example.org').catch((e) => e.code),
    );
    expect(unknown.result).toBe('USER_NOT_FOUND');
    expect(unknown.seen).toHaveLength(1);
  });

  test('deleted, made again and routed to proxy: every RCPT sees the change at once', async () => {
    const first = await service.users.create('vale', {});
    expect((await service.delivery.resolve('vale@example.org')).user.id).toBe(first.id);
    await service.users.remove('vale');
    await expect(service.delivery.resolve('vale@example.org')).rejects.toMatchObject({
      code: 'USER_NOT_FOUND',
    });
    // A new user of the same name is a new id: mail goes to them, never to the old id.
    const again = await service.users.create('vale', {});
    expect(again.id).not.toBe(first.id);
    expect((await service.delivery.resolve('vale@example.org')).user.id).toBe(again.id);
    // Routed to proxy with no relay named: a temporary refusal at once, no delivery here.
    await service.users.setRoute('vale', 'proxy');
    await expect(service.delivery.resolve('vale@example.org')).rejects.toMatchObject({
      code: 'MAILBOX_MIGRATING',
    });
    await service.users.setRoute('vale', 'store');
    expect((await service.delivery.resolve('vale@example.org')).user.id).toBe(again.id);
  });
});
