'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { useCliSuite, runCli, spawnCli } = require('@mailgate/test-support/db');
const { corpusDir } = require('@mailgate/test-support/corpus');
const { msg, mboxOf } = require('@mailgate/test-support/mail');

const suite = useCliSuite('resume');
const { tmp } = suite;

/** Real mail when the shared corpus is there, else generated messages (same shape). */
function buildSource(n) {
  const dir = corpusDir();
  const messages = [];
  if (dir) {
    const root = path.join(dir, 'enron', 'maildir');
    outer: for (const u of fs.readdirSync(root).sort()) {
      const inbox = path.join(root, u, 'inbox');
      if (!fs.existsSync(inbox)) continue;
      const files = fs
        .readdirSync(inbox)
        .filter((f) => /^\d+$/.test(f))
        .sort((a, b) => a - b);
      for (const f of files) {
        messages.push(fs.readFileSync(path.join(inbox, f)));
        if (messages.length >= n) break outer;
      }
    }
  }
  for (let i = messages.length; i < n; i++)
    messages.push(msg({ subject: `msg ${i}`, body: `body ${i}\n`.repeat(40) }));
  // Two exact copies of one message: a resumed run must keep both, and no more.
  messages.push(messages[0]);
  return mboxOf(messages);
}

async function countRows() {
  const r = await suite.db.knex.raw(
    'SELECT count(*)::int AS n, count(DISTINCT (content_hash, dup_index))::int AS k FROM messages',
  );
  return r.rows[0];
}

test('an import killed with SIGKILL resumes with no loss and no duplicates', async () => {
  const file = path.join(tmp, 'big.mbox');
  fs.writeFileSync(file, buildSource(6000));
  const env = { MAILGATE_BATCH_SIZE: '100', MAILGATE_IMPORT_WORKERS: '1' };
  const child = spawnCli(['import', 'mbox', file, '--user', 'rex', '--quiet'], {
    url: suite.db.url,
    env,
  });
  const exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  // Kill once some batches are committed but well before the end.
  const deadline = Date.now() + 120000;
  let stored = 0;
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    stored = (await countRows()).n;
    if (stored >= 500) break;
  }
  child.kill('SIGKILL');
  const how = await exited;
  expect(how.signal).toBe('SIGKILL');
  const partial = (await countRows()).n;
  expect(partial).toBeGreaterThan(0);
  expect(partial).toBeLessThan(6001);

  const r = runCli(['import', 'mbox', file, '--user', 'rex', '--json', '--quiet'], {
    url: suite.db.url,
    env,
  });
  expect(r.code).toBe(0);
  expect(r.json.messages).toBe(6001);
  expect(r.json.imported + r.json.duplicates).toBe(6001);
  expect(r.json.imported).toBe(6001 - partial);
  const after = await countRows();
  expect(after).toEqual({ n: 6001, k: 6001 });
  const v = runCli(['verify', 'mbox', file, '--user', 'rex', '--json'], { url: suite.db.url });
  expect(v.json).toMatchObject({ ok: true, present: 6001 });
  const out = path.join(tmp, 'out.mbox');
  runCli(['export', 'mbox', '--user', 'rex', '--mailbox', 'big', '--out', out], {
    url: suite.db.url,
  });
  expect(fs.readFileSync(out).equals(fs.readFileSync(file))).toBe(true);
});
