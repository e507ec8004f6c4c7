'use strict';

/*
 * `npm run bench:es`: time to mirror the Enron set (or MAILGATE_BENCH_LIMIT messages of it, at
 * least 20,000) into Elasticsearch through the outbox, and word-search latency for a rare and
 * a common word, ES vs PostgreSQL, on the same data. Needs ELASTICSEARCH_URL. Uses a scratch
 * MAILGATE_HOME (embedded PostgreSQL) unless DATABASE_URL is set; writes
 * bench/results/es-<timestamp>.json.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { loadConfig, createLogger } = require('@mailgate/core');
const { openDatabase } = require('@mailgate/service');
const { PgStore } = require('@mailgate/store');
const importer = require('@mailgate/importer');
const { openMirror, syncAll, searchEs } = require('@mailgate/es');
const { ROOT, corpusDir } = require('../command-kit');

const RUNS = 7;

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function time(fn) {
  const ms = [];
  let last;
  for (let i = 0; i < RUNS; i++) {
    const t0 = process.hrtime.bigint();
    last = await fn();
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return { median: median(ms), min: Math.min(...ms), max: Math.max(...ms), matches: last.total };
}

/** `bench es`: see the file comment (no options; MAILGATE_BENCH_LIMIT, ELASTICSEARCH_URL). */
async function main() {
  if (!process.env.DATABASE_URL && !process.env.MAILGATE_HOME) {
    process.env.MAILGATE_HOME = path.join(os.tmpdir(), 'mailgate-bench-es');
  }
  const config = loadConfig();
  if (!config.elasticsearchUrl) throw new Error('set ELASTICSEARCH_URL (npm run es:start)');
  const dir = corpusDir();
  if (!dir) throw new Error('the Enron corpus (../shared/corpus) is needed');
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const prefix = `mgbench-${Date.now()}`;
  const env = { MAILGATE_ES_PREFIX: prefix };
  const log = createLogger({ logLevel: 'warn' });
  const db = await openDatabase(config);
  const store = new PgStore(db.knex, { outbox: true });
  const mirror = openMirror(config, store, { env, log });
  const user = `bench-es-${Date.now()}`;
  try {
    // Import with the outbox on (what a mirrored installation pays), then drain it.
    process.stderr.write('importing the Enron set into PostgreSQL…\n');
    const imp = await importer.runImport({
      store,
      kind: 'mh',
      paths: [path.join(dir, 'enron', 'maildir')],
      user,
      workers: config.importWorkers,
      batchSize: config.batchSize,
      progress: false,
      log,
    });
    const u = await store.getUser(user);
    await db.knex.raw('ANALYZE messages');
    // Only this run's rows: other users' queued changes are not ours to ship.
    const queued = (
      await db.knex.raw('SELECT count(*)::int AS n FROM es_outbox WHERE user_id = ?', [u.id])
    ).rows[0].n;
    process.stderr.write(`mirroring ${queued} changes into Elasticsearch…\n`);
    const sync = await syncAll({ ...mirror });
    const words = { rare: 'happy', common: 'please' };
    const search = {};
    for (const [kind, w] of Object.entries(words)) {
      search[kind] = {
        word: w,
        pg: await time(() => store.search(u.id, w)),
        es: await time(() => searchEs(mirror, u.id, w)),
      };
    }
    const result = {
      machine: {
        cpus: os.cpus().length,
        cpuModel: os.cpus()[0] && os.cpus()[0].model,
        memGB: Math.round(os.totalmem() / 2 ** 30),
        node: process.version,
        es: (await mirror.client.cluster.health()).cluster_name,
      },
      messages: imp.imported,
      importSeconds: imp.seconds,
      importRate: imp.rate,
      mirror: {
        changes: sync.rows,
        seconds: sync.seconds,
        messagesPerSecond: Math.round(sync.rows / sync.seconds),
        batches: sync.batches,
      },
      search,
    };
    fs.mkdirSync(path.join(ROOT, 'bench', 'results'), { recursive: true });
    const out = path.join(ROOT, 'bench', 'results', `es-${stamp}.json`);
    fs.writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
    process.stderr.write(`wrote ${out}\n`);
  } finally {
    await mirror.client.indices.delete({ index: `${prefix}-*` }).catch(() => {});
    await mirror.close();
    await db.close();
  }
}

module.exports = {
  description: 'mirror the Enron set into Elasticsearch; word search ES vs PostgreSQL',
  usage: '(needs ELASTICSEARCH_URL)',
  run: main,
};
