'use strict';

/*
 * Elasticsearch with two nodes (issue 34.5): the project's ES script starts a cluster of two
 * local nodes (ES_NODES=2: HTTP 9210/9211, transport 9310/9311, 256 MB heaps; never the dev
 * node's 9200), the mirror's indexes get one replica of every shard (auto_expand_replicas
 * 0-1), and the data node is stopped while searches run and an import is shipped: every search
 * is answered (errors = 0), the outbox ships meanwhile, the node comes back, and
 * `mailgate es verify` is clean. Needs java and mvn (as the ES tests do): required in CI.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const { spawn, spawnSync } = require('node:child_process');
const { createTestDatabase, runCli } = require('@mailgate/test-support/db');
const { msg } = require('@mailgate/test-support/mail');
const { importMessages } = require('@mailgate/test-support/mail');
const { skipOutsideCI } = require('@mailgate/test-support/skip');
const { createMailService } = require('@mailgate/service');

const ES_JS = path.resolve(__dirname, '..', '..', '..', 'scripts', 'elasticsearch', 'es.js');
const HTTP_PORT = 9210;
const URL_1 = `http://127.0.0.1:${HTTP_PORT}`;

const missing = ['java', 'mvn'].filter(
  (cmd) => spawnSync(cmd, ['-version'], { stdio: 'ignore' }).error,
);
const reason = missing.length ? `${missing.join(' and ')} not found (scripts/elasticsearch)` : null;

let tmp;
let db;
let service;
const prefix = `mgt-2n-${crypto.randomBytes(4).toString('hex')}`;

/** Runs es.js on the cluster (ES_NODE: one node only); resolves with its exit code. */
function esCluster(cmd, node) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [ES_JS, cmd], {
      env: {
        ...process.env,
        ES_NODES: '2',
        ES_NODE: node ? String(node) : '',
        ES_HOME: path.join(tmp, 'es'),
        ES_PORT: String(HTTP_PORT),
        ES_TRANSPORT_PORT: '9310',
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.once('exit', (code) => resolve(code));
  });
}

async function health(status) {
  const r = await fetch(`${URL_1}/_cluster/health?wait_for_status=${status}&timeout=60s`);
  return r.json();
}

let skipped = null;
beforeAll(async () => {
  skipped = skipOutsideCI(__filename, reason);
  if (skipped) return;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mailgate-2n-'));
  expect(await esCluster('start')).toBe(0);
  db = await createTestDatabase();
  service = await createMailService({
    knex: db.knex,
    env: {
      MAILGATE_HOME: tmp,
      LOG_LEVEL: 'silent',
      ELASTICSEARCH_URL: URL_1,
      MAILGATE_ES_PREFIX: prefix,
    },
  });
}, 300000);

afterAll(async () => {
  if (service) await service.close();
  if (db) await db.drop();
  if (tmp) {
    await esCluster('stop');
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}, 120000);

test('a node stops during searches and an import: every search answered, verify clean', async () => {
  if (skipped) return;
  const words = ['alpha', 'bravo', 'charlie'];
  await importMessages(service.store, path.join(tmp, 'a.mbox'), {
    user: 'ema',
    mailbox: 'INBOX',
    messages: Array.from({ length: 300 }, (_, i) =>
      msg({ subject: `m ${i}`, body: `${words[i % 3]} text ${i}\n` }),
    ),
  });
  await service.syncMirror();
  // Two nodes, one replica of every shard, all started.
  const h = await health('green');
  expect(h).toMatchObject({ number_of_nodes: 2, status: 'green' });
  const shards = await (await fetch(`${URL_1}/_cat/shards/${prefix}-*?format=json`)).json();
  expect(shards.filter((s) => s.prirep === 'r' && s.state === 'STARTED').length).toBe(
    shards.filter((s) => s.prirep === 'p').length,
  );

  const es = await service.openBackend('es', 'ema');
  const expected = (await es.search('bravo', { limit: 0 })).total;
  expect(expected).toBe(100);

  // Search load through the es backend until told to stop.
  // phase: 'up' (both nodes), 'down' (from node 2's stop until it is back and green).
  const load = { run: true, ok: 0, errors: [], wrong: 0, ms: [], phase: 'up', byPhase: {} };
  const loop = (async () => {
    while (load.run) {
      const t0 = process.hrtime.bigint();
      try {
        const r = await es.search('bravo', { limit: 10 });
        if (r.total < expected) load.wrong++;
        load.ok++;
      } catch (err) {
        load.errors.push(err.code || err.message);
      }
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      load.ms.push(ms);
      (load.byPhase[load.phase] ??= []).push(ms);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();

  // The data node goes; an import is shipped while it is away.
  while (load.ok < 20) await new Promise((r) => setTimeout(r, 20));
  load.phase = 'down';
  expect(await esCluster('stop', 2)).toBe(0);
  await importMessages(service.store, path.join(tmp, 'b.mbox'), {
    user: 'ema',
    mailbox: 'Late',
    messages: Array.from({ length: 200 }, (_, i) => msg({ subject: `late ${i}` })),
  });
  const shipped = await service.syncMirror();
  expect(shipped.pending).toBe(0);
  const during = load.ok;

  // It comes back; the replicas recover.
  expect(await esCluster('start', 2)).toBe(0);
  expect(await health('green')).toMatchObject({ number_of_nodes: 2, status: 'green' });
  load.run = false;
  await loop;

  const stats = (xs) => {
    const sorted = [...xs].sort((a, b) => a - b);
    const q = (f) => +sorted[Math.min(sorted.length - 1, Math.floor(f * sorted.length))].toFixed(1);
    return { searches: xs.length, p50: q(0.5), p99: q(0.99), max: q(1) };
  };
  const result = {
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, loadavg: os.loadavg().map((x) => +x.toFixed(2)) },
    cluster: { nodes: 2, heap: '256m each', stopped: 'node 2 (data only)' },
    errors: load.errors.length,
    incomplete: load.wrong,
    importedWhileDown: 200,
    latencyMs: { all: stats(load.ms), up: stats(load.byPhase.up), down: stats(load.byPhase.down) },
  };
  console.log(`two-node ES: ${JSON.stringify(result)}`);
  // A committed figure comes from a file: MAILGATE_RESULT_FILE=bench/results/<name>.json.
  if (process.env.MAILGATE_RESULT_FILE) {
    fs.writeFileSync(process.env.MAILGATE_RESULT_FILE, JSON.stringify(result, null, 2) + '\n');
  }
  expect(load.errors).toEqual([]);
  expect(load.wrong).toBe(0);
  expect(during).toBeGreaterThan(0);

  const v = runCli(['es', 'verify', '--user', 'ema', '--json'], {
    url: db.url,
    env: { ELASTICSEARCH_URL: URL_1, MAILGATE_ES_PREFIX: prefix },
  });
  expect(v.code).toBe(0);
  expect(v.json).toMatchObject({ ok: true, pending: 0 });
});
