'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { useCliSuite } = require('@mailgate/test-support/db');
const { msg } = require('@mailgate/test-support/mail');

// Issue 30.9: a resumed import counted the entries before its checkpoint (only re-hashed) as
// new work: its progress rate and ETA, and its final "msg/s", were inflated by them.
const suite = useCliSuite('resume-rate');

test('a resumed import reports what the killed run did apart, and its rate on new messages', async () => {
  const dir = path.join(suite.tmp, 'mh');
  fs.mkdirSync(dir);
  for (let i = 1; i <= 40; i++)
    fs.writeFileSync(path.join(dir, String(i)), msg({ subject: `r ${i}` }));
  const env = { MAILGATE_BATCH_SIZE: '10' };
  const first = suite.cli(['import', 'mh', dir, '--user', 'res', '--json', '--quiet'], { env });
  expect(first.json).toMatchObject({ messages: 40, imported: 40, resumed: 0 });
  // As a run killed after 30 entries leaves it: 30 stored, the job running at index 30.
  const { knex } = suite.db;
  const job = await knex('import_jobs').where({ source: dir }).first('id');
  await knex('import_jobs')
    .where({ id: job.id })
    .update({ state: 'running', checkpoint: JSON.stringify({ index: 30 }) });
  await knex.raw(
    `DELETE FROM messages WHERE uid > 30 AND mailbox_id IN
       (SELECT id FROM mailboxes WHERE user_id = (SELECT id FROM users WHERE name = 'res'))`,
  );
  const r = suite.cli(['import', 'mh', dir, '--user', 'res', '--json'], { env });
  expect(r.code).toBe(0);
  expect(r.json).toMatchObject({ messages: 40, imported: 10, duplicates: 30, resumed: 30 });
  // Progress lines (JSON off a terminal): new work and resumed work apart.
  const lines = r.stderr
    .split('\n')
    .filter((l) => l.startsWith('{"progress"'))
    .map((l) => JSON.parse(l));
  expect(lines[lines.length - 1]).toMatchObject({ count: 10, skipped: 30, done: true });
  // The human report says it too.
  await knex('import_jobs')
    .where({ id: job.id })
    .update({ state: 'running', checkpoint: JSON.stringify({ index: 35 }) });
  const h = suite.cli(['import', 'mh', dir, '--user', 'res'], { env });
  expect(h.stderr).toMatch(
    /done: 40 messages, 0 imported, 40 already present \(35 stored by the run this one resumed, only re-checked\), .* msg\/s on new messages\)/,
  );
});
