'use strict';

/*
 * Issue 34.3: a worker added online. On the 3-node cluster (scripts/citus/citus.sh) a fourth
 * node is started (`citus.sh add-node`), added with citus_add_node, and citus_rebalance_start()
 * moves shards onto it while one user's mail is read and written without pause (appends, flag
 * changes, searches, list reads through the store) and an import runs for another user. No
 * operation may fail, nothing may be lost: after the rebalance the counts equal what was
 * written, and the new node holds shards.
 *
 * Shards move in the rebalancer's default mode ('auto': logical replication, writes to a moving
 * shard go on during the copy). It needs a replica identity on every table of the shard group;
 * thread_keys had none until migration 20261129340100_thread_keys_key.js, and before it the
 * rebalance was refused here ("cannot use logical replication … thread_keys").
 */

const os = require('node:os');
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const { execFileSync } = require('node:child_process');
const Knex = require('knex');
const { PgStore, byName } = require('@mailgate/store');
const { deriveRow } = require('@mailgate/importer');
const { msg, importMessages } = require('@mailgate/test-support/mail');
const {
  describeCitus,
  createMigratedCitusDatabase,
  withDb,
} = require('@mailgate/test-support/citus');

const SCRIPT = path.resolve(__dirname, '..', '..', '..', 'scripts', 'citus', 'citus.sh');
const run = describeCitus(__filename);

run('Citus: a worker added online while mail is read, written and imported (issue 34.3)', () => {
  const name = `mgt_citus_add_${crypto.randomBytes(4).toString('hex')}`;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mailgate-citus-add-'));
  let cluster;
  let knex;
  let store;
  let newNode;
  const onNewNode = (fn) => {
    const k = Knex({ client: 'pg', connection: newNode, pool: { min: 0, max: 1 } });
    return fn(k).finally(() => k.destroy());
  };

  beforeAll(async () => {
    ({ cluster, knex } = await createMigratedCitusDatabase(name, { pool: { min: 0, max: 8 } }));
    store = new PgStore(knex);
    // The fourth node (port base+3), with this test's database on it.
    const hostPort = execFileSync('bash', [SCRIPT, 'add-node'], { encoding: 'utf8' }).trim();
    const [host, port] = hostPort.split(':');
    const u = new URL(cluster.url);
    u.hostname = host;
    u.port = port;
    newNode = u.toString();
    await onNewNode(async (k) => {
      const admin = Knex({
        client: 'pg',
        connection: withDb(newNode, 'postgres'),
        pool: { min: 0, max: 1 },
      });
      try {
        await admin.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin.raw(`CREATE DATABASE ${name}`);
      } finally {
        await admin.destroy();
      }
      await k.raw('CREATE EXTENSION citus');
      await k.raw('CREATE EXTENSION pg_trgm');
    });
  });

  afterAll(async () => {
    if (knex) await knex.destroy();
    if (cluster) await cluster.drop();
    if (newNode) {
      const admin = Knex({
        client: 'pg',
        connection: withDb(newNode, 'postgres'),
        pool: { min: 0, max: 1 },
      });
      await admin.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
      await admin.destroy();
    }
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('rebalance onto a new worker: no error, nothing lost, counts equal after', async () => {
    const first = Array.from({ length: 40 }, (_, i) =>
      msg({ subject: `before ${i}`, body: `steady body ${i}\n` }),
    );
    await importMessages(store, path.join(tmp, 'ann.mbox'), {
      messages: first,
      user: 'ann',
      mailbox: 'INBOX',
    });
    const ann = await store.getUser('ann');
    const inbox = (await store.getMailbox(ann.id, 'INBOX')).id;

    const port = new URL(newNode).port;
    await knex.raw('SELECT citus_add_node(?, ?)', [new URL(newNode).hostname, Number(port)]);
    await knex.raw("SELECT citus_rebalance_start(shard_transfer_mode => 'auto')");

    // The user keeps working while shards move; an import for another user runs beside.
    const errors = [];
    let appended = 0;
    let flagged = 0;
    let stop = false;
    const client = (async () => {
      while (!stop) {
        try {
          const raw = msg({ subject: `during ${appended}`, body: `written while moving\n` });
          await store.appendMessage(ann.id, byName('INBOX'), { raw, row: deriveRow(raw).row });
          appended++;
          const uids = (await store.scanHeaders(ann.id, inbox)).map((r) => r.uid);
          await store.setFlags(ann.id, inbox, {
            uids: [uids[flagged % uids.length]],
            add: ['\\Flagged'],
          });
          flagged++;
          await store.search(ann.id, 'steady', { mailboxId: inbox });
        } catch (err) {
          errors.push(`${err.code}: ${err.message}`);
        }
      }
    })();
    const imported = Array.from({ length: 300 }, (_, i) =>
      msg({ subject: `import ${i}`, body: `imported while moving ${i}\n` }),
    );
    const importDone = importMessages(store, path.join(tmp, 'ben.mbox'), {
      messages: imported,
      user: 'ben',
      mailbox: 'INBOX',
      batchSize: 50,
    });
    await knex.raw('SELECT citus_rebalance_wait()');
    await importDone;
    stop = true;
    await client;

    expect(errors).toEqual([]);
    expect(appended).toBeGreaterThan(0);
    const moved = await knex.raw(
      `SELECT count(*)::int AS n FROM pg_dist_shard_placement WHERE nodeport = ?`,
      [Number(port)],
    );
    expect(moved.rows[0].n).toBeGreaterThan(0);
    const job = await knex.raw(
      'SELECT state FROM pg_dist_background_job ORDER BY job_id DESC LIMIT 1',
    );
    expect(job.rows[0].state).toBe('finished');
    // Nothing lost: every message written is there, once.
    expect((await store.scanHeaders(ann.id, inbox)).length).toBe(40 + appended);
    expect((await store.search(ann.id, 'during')).total).toBe(appended);
    const ben = await store.getUser('ben');
    expect((await store.search(ben.id, 'imported')).total).toBe(300);
    const benInbox = (await store.getMailbox(ben.id, 'INBOX')).id;
    expect((await store.scanHeaders(ben.id, benInbox)).length).toBe(300);
  });
});
