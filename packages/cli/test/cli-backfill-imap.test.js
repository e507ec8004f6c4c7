'use strict';

/*
 * `mailgate db backfill-imap`: the IMAP metadata of mail stored before it was derived at import
 * (migration 20261129350100_message_imap.js) is derived and kept, every message once; a second
 * run finds nothing to do; an unknown user is a coded error.
 */

const fs = require('node:fs');
const path = require('node:path');
const { useCliSuite } = require('@mailgate/test-support/db');
const { msg, mboxOf } = require('@mailgate/test-support/mail');

const suite = useCliSuite('cli-backfill-imap');
const kept = async () => Number((await suite.db.knex('message_imap').count())[0].count);

test('derives what is missing, once; an unknown user is USER_NOT_FOUND', async () => {
  const file = path.join(suite.tmp, 'inbox.mbox');
  fs.writeFileSync(file, mboxOf([1, 2, 3].map((i) => msg({ subject: `m${i}` }))));
  expect(suite.cli(['import', 'mbox', file, '--user', 'bf', '--quiet']).code).toBe(0);
  // Kept at import already; as a database from before the migration, without it:
  expect(await kept()).toBe(3);
  await suite.db.knex('message_imap').del();
  await suite.db.knex('message_imap_lines').del();

  const r = suite.cli(['db', 'backfill-imap', '--user', 'bf', '--json']);
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout)).toEqual({ users: 1, messages: 3, kept: 3, skipped: 0 });
  expect(await kept()).toBe(3);
  const again = suite.cli(['db', 'backfill-imap', '--json']);
  expect(JSON.parse(again.stdout)).toMatchObject({ messages: 0, kept: 0 });

  const none = suite.cli(['db', 'backfill-imap', '--user', 'nobody']);
  expect(none.code).toBe(1);
  expect(none.stderr).toMatch(/^USER_NOT_FOUND: /m);
});
