'use strict';

/*
 * The mirror's guarantees under faults, against a real node: an ES outage loses no change
 * (outbox grows, the serve worker drains it afterwards); a `es sync` SIGKILLed mid-batch
 * neither loses nor re-applies a change; `es reindex` under concurrent writes ends clean.
 */

const fs = require('node:fs');
const path = require('node:path');
const { useCliSuite, spawnCli } = require('@mailgate/test-support/db');
const { describeEs } = require('@mailgate/test-support/es');
const { msg, mboxOf } = require('@mailgate/test-support/mail');
const { PgStore } = require('@mailgate/store');
const { openMirror, EsWorker, pending } = require('@mailgate/es');

jest.setTimeout(300000);

const suite = useCliSuite('esf');
const CLOSED = 'http://127.0.0.1:1';
const quiet = { info() {}, warn() {}, debug() {}, error() {} };

function mbox(name, n, tag) {
  const file = path.join(suite.tmp, name);
  const msgs = [];
  for (let i = 0; i < n; i++) {
    msgs.push(msg({ subject: `${tag} message ${i}`, body: `body ${tag} number ${i} gas\n` }));
  }
  fs.writeFileSync(file, mboxOf(msgs));
  return file;
}

async function until(fn, ms = 60000) {
  const t0 = Date.now();
  while (!(await fn())) {
    if (Date.now() - t0 > ms) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 200));
  }
}

describeEs('packages/es/test/es-faults.test.js', 'Elasticsearch mirror: faults', (es) => {
  const env = (url = es.url) => ({ ELASTICSEARCH_URL: url, MAILGATE_ES_PREFIX: es.prefix });
  let store;
  const box = async (user, name = 'INBOX') => {
    const u = await store.getUser(user);
    return { u, mb: await store.getMailbox(u.id, name) };
  };

  beforeAll(() => {
    store = new PgStore(suite.db.knex, { outbox: true });
  });

  test('ES outage: writes succeed, outbox grows, the worker drains it, verify is clean', async () => {
    if (es.skipped()) return;
    // Writes while ES is unreachable (closed port).
    const imp = suite.cli(
      [
        'import',
        'mbox',
        mbox('out.mbox', 120, 'outage'),
        '--user',
        'olga',
        '--mailbox',
        'INBOX',
        '--json',
      ],
      { env: env(CLOSED) },
    );
    expect(imp.code).toBe(0);
    expect(imp.json.imported).toBe(120);
    const { u, mb } = await box('olga');
    await store.setFlags(u.id, mb.id, { uids: [1, 2, 3, 4, 5], add: ['\\Deleted', '\\Seen'] });
    await store.setFlags(u.id, mb.id, { uids: [10, 11], add: ['\\Flagged'] });
    expect((await store.expunge(u.id, mb.id)).expunged).toEqual([1, 2, 3, 4, 5]);
    await store.purgeExpunged(u.id, mb.id);
    expect(await pending(suite.db.store)).toBe(120 + 5 + 2 + 5);
    const failed = suite.cli(['es', 'sync', '--attempts', '1', '--json'], { env: env(CLOSED) });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('ES_UNAVAILABLE');
    expect(await pending(suite.db.store)).toBe(132);

    // The serve worker: first against the dead port (backs off, loses nothing) …
    const dead = openMirror({ elasticsearchUrl: CLOSED }, suite.db.store, {
      env: { MAILGATE_ES_PREFIX: es.prefix },
    });
    const w1 = new EsWorker({ ...dead, log: quiet }).start();
    await new Promise((r) => setTimeout(r, 1500));
    await w1.stop();
    await dead.close();
    expect(await pending(suite.db.store)).toBe(132);
    // … then with ES back: it drains the outbox.
    const live = openMirror({ elasticsearchUrl: es.url }, suite.db.store, {
      env: { MAILGATE_ES_PREFIX: es.prefix },
    });
    const w2 = new EsWorker({ ...live, log: quiet, intervalMs: 100 }).start();
    await until(async () => (await pending(suite.db.store)) === 0);
    await w2.stop();
    await live.close();
    const v = suite.cli(['es', 'verify', '--user', 'olga', '--json'], { env: env() });
    expect(v.json.users[0].mailboxes[0]).toMatchObject({ pg: 115, es: 115, ok: true });
    expect(v.code).toBe(0);
  });

  test('es sync SIGKILLed mid-batch: nothing lost, nothing applied twice', async () => {
    if (es.skipped()) return;
    const imp = suite.cli(
      ['import', 'mbox', mbox('kill.mbox', 300, 'kill'), '--user', 'kurt', '--mailbox', 'INBOX'],
      { env: env() },
    );
    expect(imp.code).toBe(0);
    const { u, mb } = await box('kurt');
    await store.setFlags(u.id, mb.id, { query: '', add: ['\\Seen'] });
    const queued = await pending(suite.db.store);
    expect(queued).toBe(600);
    // Batches of 100 rows; the child pauses after each acknowledged bulk, before COMMIT.
    const child = spawnCli(['es', 'sync', '--batch', '100'], {
      url: suite.db.url,
      env: { ...env(), MAILGATE_ES_SYNC_PAUSE_MS: '5000' },
    });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    await until(() => err.includes('bulk acknowledged'));
    child.kill('SIGKILL');
    await new Promise((r) => child.on('exit', r));
    // ES holds the batch, PostgreSQL still has its rows: the batch never committed.
    expect(await pending(suite.db.store)).toBe(queued);
    const s = suite.cli(['es', 'sync', '--json'], { env: env() });
    expect(s.code).toBe(0);
    // The re-sent documents were refused as already applied (external version = modseq).
    expect(s.json.skipped).toBeGreaterThan(0);
    expect(s.json.pending).toBe(0);
    // verify also checks that every document's _version is its row's modseq.
    const v = suite.cli(['es', 'verify', '--user', 'kurt', '--json'], { env: env() });
    expect(v.json.ok).toBe(true);
    const r = await es.client.search({
      index: `${es.prefix}-u${u.id}`,
      size: 1000,
      version: true,
      query: { match_all: {} },
    });
    expect(r.hits.hits).toHaveLength(300);
    const mod = await suite.db.knex('messages').where({ user_id: u.id }).select('uid', 'modseq');
    const byUid = new Map(mod.map((m) => [Number(m.uid), Number(m.modseq)]));
    for (const h of r.hits.hits) expect(h._version).toBe(byUid.get(h._source.uid));
    expect(new Set(r.hits.hits.map((h) => h._source.flags.join()))).toEqual(new Set(['\\Seen']));
  });

  test('es reindex under concurrent writes ends with verify clean', async () => {
    if (es.skipped()) return;
    expect(
      suite.cli(
        ['import', 'mbox', mbox('re.mbox', 1500, 'reidx'), '--user', 'rita', '--mailbox', 'INBOX'],
        { env: env() },
      ).code,
    ).toBe(0);
    expect(suite.cli(['es', 'sync'], { env: env() }).code).toBe(0);
    const { u, mb } = await box('rita');
    const before = Object.keys(await es.client.indices.getAlias({ name: `${es.prefix}-u${u.id}` }));

    const live = openMirror({ elasticsearchUrl: es.url }, suite.db.store, {
      env: { MAILGATE_ES_PREFIX: es.prefix },
    });
    const worker = new EsWorker({ ...live, log: quiet, intervalMs: 50 }).start();
    const child = spawnCli(['es', 'reindex', '--user', 'rita', '--json'], {
      url: suite.db.url,
      env: env(),
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const done = new Promise((r) => child.on('exit', r));
    let exited = false;
    done.then(() => (exited = true));
    // Concurrent writes for as long as the reindex runs: flags, expunges, a new import.
    const extra = mbox('re2.mbox', 200, 'during');
    const imp = spawnCli(
      ['import', 'mbox', extra, '--user', 'rita', '--mailbox', 'INBOX', '--quiet'],
      { url: suite.db.url, env: env() },
    );
    const impDone = new Promise((r) => imp.on('exit', r));
    // Drain the children's pipes: a full pipe would block them for ever.
    imp.stdout.resume();
    imp.stderr.resume();
    child.stderr.resume();
    let uid = 1;
    let writes = 0;
    while (!exited || writes < 5) {
      await store.setFlags(u.id, mb.id, { uids: [uid, uid + 1], add: ['\\Flagged', '\\Deleted'] });
      await store.expunge(u.id, mb.id, { uids: [uid] });
      uid += 2;
      writes++;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await done).toBe(0);
    expect(await impDone).toBe(0);
    await until(async () => (await pending(suite.db.store)) === 0);
    await worker.stop();
    await live.close();
    const after = Object.keys(await es.client.indices.getAlias({ name: `${es.prefix}-u${u.id}` }));
    expect(after).not.toEqual(before);
    expect(JSON.parse(out).users[0].documents).toBeGreaterThan(1000);
    const v = suite.cli(['es', 'verify', '--user', 'rita', '--json'], { env: env() });
    expect(v.json.users[0].mailboxes[0]).toMatchObject({ ok: true, pg: 1700 - writes });
    expect(v.code).toBe(0);
  });
});
