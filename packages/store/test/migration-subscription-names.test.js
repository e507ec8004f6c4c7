'use strict';

const { useTestDatabase } = require('@mailgate/test-support/db');
const { singlePostgresOnly } = require('@mailgate/test-support/skip');

/*
 * migrations/20261127900000_subscription_names.js on a database that already has
 * subscriptions: the subscribed mailboxes' names move to `subscriptions`, unsubscribed ones do
 * not, the column goes; the way down puts the column back for the names that are mailboxes.
 */
// Migrates down and up again through a migration older than the Citus distribution
// (20261128340000), whose way down is none: on Citus the tables stay distributed.
const onCitus = singlePostgresOnly(
  __filename,
  'migrating down below the Citus distribution (20261128340000 has no way down)',
);
(onCitus ? describe.skip : describe)('migration 20261127900000_subscription_names', () => {
  const suite = useTestDatabase();

  test('existing subscriptions are carried over to the list of names, both ways', async () => {
    const k = suite.db.knex;
    const name = { name: '20261127900000_subscription_names.js' };
    await k.migrate.down(name);
    const id = (await k.raw("INSERT INTO users (name) VALUES ('subs') RETURNING id")).rows[0].id;
    for (const [box, subscribed] of [
      ['INBOX', true],
      ['Lists', false],
      ['Lists/pg', true],
    ]) {
      await k.raw(
        'INSERT INTO mailboxes (user_id, name, uidvalidity, subscribed) VALUES (?, ?, 1, ?)',
        [id, box, subscribed],
      );
    }
    await k.migrate.up(name);
    const names = async () =>
      (
        await k.raw('SELECT name FROM subscriptions WHERE user_id = ? ORDER BY name', [id])
      ).rows.map((r) => r.name);
    expect(await names()).toEqual(['INBOX', 'Lists/pg']);
    const cols = await k.raw(
      "SELECT 1 FROM information_schema.columns WHERE table_name = 'mailboxes' AND column_name = 'subscribed'",
    );
    expect(cols.rows).toEqual([]);

    // Down: the column again, true exactly for the subscribed mailboxes.
    await k.migrate.down(name);
    const rows = await k.raw(
      'SELECT name, subscribed FROM mailboxes WHERE user_id = ? ORDER BY name',
      [id],
    );
    expect(rows.rows).toEqual([
      { name: 'INBOX', subscribed: true },
      { name: 'Lists', subscribed: false },
      { name: 'Lists/pg', subscribed: true },
    ]);
    await k.migrate.up(name);
  });
});
