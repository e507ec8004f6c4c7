'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { useCliSuite, spawnCli } = require('@mailgate/test-support/db');
const { msg } = require('@mailgate/test-support/mail');

// Issue 30.3: two imports of the same source at once. Before the fix one of them ended with
// `INTERNAL: … duplicate key value violates unique constraint …` and the uids its failed batch
// had allocated were lost for good. Now the second waits for the first (a lock per import
// job), says so with a coded notice, then finds everything present.
const suite = useCliSuite('concurrent');

/** Runs the CLI in its own process; resolves with {code, stdout, stderr, json}. */
function cliAsync(args, env) {
  const child = spawnCli(args, { url: suite.db.url, env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) =>
    child.once('close', (code) => {
      let json = null;
      try {
        json = JSON.parse(stdout.trim().split('\n').pop());
      } catch {
        /* not JSON: the assertions below show stdout and stderr */
      }
      resolve({ code, stdout, stderr, json });
    }),
  );
}

test('two imports of one source at once: both succeed, nothing twice, no uid burnt', async () => {
  const dir = path.join(suite.tmp, 'mh');
  fs.mkdirSync(dir);
  const N = 400;
  for (let i = 1; i <= N; i++) {
    fs.writeFileSync(path.join(dir, String(i)), msg({ subject: `m ${i}`, body: `b ${i}\n` }));
  }
  // Small batches: without the lock both runs are sure to write the same batch at once.
  const env = { MAILGATE_BATCH_SIZE: '20', MAILGATE_IMPORT_WORKERS: '0' };
  const args = ['import', 'mh', dir, '--user', 'twice', '--json', '--quiet'];
  const [a, b] = await Promise.all([cliAsync(args, env), cliAsync(args, env)]);
  for (const r of [a, b]) {
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    expect(r.stderr).not.toMatch(/INTERNAL|duplicate key/);
    expect(r.json).toMatchObject({ messages: N, quarantined: 0 });
  }
  expect(a.json.imported + b.json.imported).toBe(N);
  expect(a.json.duplicates + b.json.duplicates).toBe(N);
  const rows = await suite.db.knex.raw(
    `SELECT count(*)::int AS n, max(m.uid)::int AS top, min(b.uidnext)::int AS uidnext
       FROM messages m JOIN mailboxes b ON b.id = m.mailbox_id`,
  );
  // Every uid went to a stored message: 1..N, and UIDNEXT right after them.
  expect(rows.rows[0]).toEqual({ n: N, top: N, uidnext: N + 1 });
});

test('a run that finds its import running says IMPORT_WAITING, waits, then finds it all present', async () => {
  const dir = path.join(suite.tmp, 'mh2');
  fs.mkdirSync(dir);
  for (let i = 1; i <= 30; i++)
    fs.writeFileSync(path.join(dir, String(i)), msg({ subject: `w ${i}` }));
  const args = ['import', 'mh', dir, '--user', 'waits', '--json', '--quiet'];
  const first = await cliAsync(args, {});
  expect(first.json).toMatchObject({ imported: 30 });
  // The test plays the other run: it holds the job's lock (the store's own call).
  const job = await suite.db.knex('import_jobs').where({ source: dir }).first('id');
  const release = await suite.db.store.lockImportJob(job.id);
  const child = spawnCli(args, { url: suite.db.url, env: {} });
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (d) => (stderr += d));
  child.stdout.on('data', (d) => (stdout += d));
  let exited = false;
  const done = new Promise((resolve) =>
    child.once('close', (code) => {
      exited = true;
      resolve(code);
    }),
  );
  while (!/IMPORT_WAITING/.test(stderr) && !exited) await new Promise((r) => setTimeout(r, 50));
  expect(stderr).toMatch(/^IMPORT_WAITING: Another import of .* for user waits is running/m);
  expect(exited).toBe(false); // it waits for the lock, it does not fail
  await release();
  expect(await done).toBe(0);
  const report = JSON.parse(stdout.trim().split('\n').pop());
  expect(report).toMatchObject({ messages: 30, imported: 0, duplicates: 30 });
  expect(report.warnings.map((w) => w.code)).toEqual(['IMPORT_WAITING']);
});

test('a batch that meets rows another import just wrote fails with IMPORT_CONFLICT, not SQL text', async () => {
  const { deriveRow } = require('@mailgate/importer');
  const crypto = require('node:crypto');
  const { store } = suite.db;
  const user = await store.ensureUser('conflict');
  const box = await store.ensureMailbox(user.id, 'INBOX');
  const raw = Buffer.from(msg({ subject: 'same mail, two sources' }));
  const item = {
    mailboxId: box.id,
    mailbox: 'INBOX',
    hash: crypto.createHash('sha256').update(raw).digest(),
    dup: 0,
    row: {
      ...deriveRow(raw).row,
      internal_date: new Date().toISOString(),
      flags: [],
      keywords: [],
    },
    source: { raw },
  };
  const data = { messages: [item], quarantined: [] };
  // Two imports of different sources both find the message missing, then both write it.
  const a = await store.prepareBatch(user.id, data);
  const b = await store.prepareBatch(user.id, data);
  await store.commitBatch(user.id, a, data);
  const err = await store.commitBatch(user.id, b, data).catch((e) => e);
  expect(err).toMatchObject({ code: 'IMPORT_CONFLICT' });
  expect(err.message).toMatch(/^Another import wrote the same messages into INBOX/);
  expect(err.message).not.toMatch(/duplicate key|constraint/);
});
