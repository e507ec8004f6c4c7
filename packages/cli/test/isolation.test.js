'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { useCliSuite } = require('@mailgate/test-support/db');
const { msg, mboxOf } = require('@mailgate/test-support/mail');

const suite = useCliSuite('iso');
const { tmp } = suite;
const cli = (args) => suite.cli(args);

test('the same mailbox imported for two users stays separate', () => {
  const file = path.join(tmp, 'inbox.mbox');
  fs.writeFileSync(file, mboxOf([msg({ subject: 'shared one' }), msg({ subject: 'shared two' })]));
  for (const u of ['ann', 'ben']) {
    expect(cli(['import', 'mbox', file, '--user', u, '--json']).json).toMatchObject({
      imported: 2,
      duplicates: 0,
    });
  }
  // Only ann's copy gets a third message and a flag change later.
  const extra = path.join(tmp, 'extra.mbox');
  fs.writeFileSync(extra, mboxOf([msg({ subject: 'only ann' })]));
  cli(['import', 'mbox', extra, '--user', 'ann', '--mailbox', 'INBOX']);
  expect(cli(['ls', '--user', 'ann', '--json']).json.mailboxes[0].total).toBe(3);
  expect(cli(['ls', '--user', 'ben', '--json']).json.mailboxes[0].total).toBe(2);
  expect(cli(['search', 'subject:only', '--user', 'ben', '--json']).json.total).toBe(0);
  expect(cli(['search', 'subject:only', '--user', 'ann', '--json']).json.total).toBe(1);
});

test("a one-user query plans only that user's partitions", async () => {
  const ann = await suite.db.store.getUser('ann');
  const ben = await suite.db.store.getUser('ben');
  const plan = async (sql, bindings) =>
    (await suite.db.knex.raw(`EXPLAIN (FORMAT TEXT) ${sql}`, bindings)).rows
      .map((r) => r['QUERY PLAN'])
      .join('\n');

  const headers = await plan(
    'SELECT uid, subject FROM messages WHERE user_id = ? AND mailbox_id = ? ORDER BY uid',
    [ann.id, 1],
  );
  expect(headers).toContain(`messages_u${ann.id}`);
  expect(headers).not.toContain(`messages_u${ben.id}`);

  const search = await plan(
    "SELECT uid FROM message_words w WHERE w.user_id = ? AND w.tsv @@ plainto_tsquery('simple', ?)",
    [ben.id, 'shared'],
  );
  expect(search).toContain(`message_words_u${ben.id}`);
  expect(search).not.toContain(`message_words_u${ann.id}`);

  // The store's own search SQL (generic plan, parameter not folded) is pruned too.
  await suite.db.knex.raw('SET plan_cache_mode = force_generic_plan');
  const r = await suite.db.store.search(ann.id, 'shared');
  expect(r.total).toBe(2);
  const src = await plan('SELECT raw FROM message_sources WHERE user_id = ? AND uid = 1', [ann.id]);
  expect(src).toContain(`message_sources_u${ann.id}`);
  expect(src).not.toContain(`message_sources_u${ben.id}`);
});
