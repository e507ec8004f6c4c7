'use strict';

/*
 * `npm run bench:es`: time to mirror the Enron set (every message of ../shared/corpus's
 * enron/maildir, imported as MH) into Elasticsearch through the outbox, and word-search
 * latency for a rare and a common word, ES vs PostgreSQL, on the same data, each through the
 * mail service's backend of that kind (search over every mailbox, no rows: the matching set).
 * Needs ELASTICSEARCH_URL. Uses a scratch MAILGATE_HOME (embedded PostgreSQL) unless
 * DATABASE_URL is set; writes bench/results/es-<timestamp>.json.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { loadConfig, createLogger } = require('@mailgate/core');
const { createMailService } = require('@mailgate/service');
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

/**
 * `bench es`: see the file comment (no options; ELASTICSEARCH_URL). The
 * import, the mirror and both searches go through the mail service (issue 31.3): the same
 * doors as `mailgate import`, `mailgate es sync` and `mailgate search --backend pg|es`.
 */
async function main() {
  if (!process.env.DATABASE_URL && !process.env.MAILGATE_HOME) {
    process.env.MAILGATE_HOME = path.join(os.tmpdir(), 'mailgate-bench-es');
  }
  const prefix = `mgbench-${Date.now()}`;
  const env = { ...process.env, MAILGATE_ES_PREFIX: prefix };
  const config = loadConfig(env);
  if (!config.elasticsearchUrl) throw new Error('set ELASTICSEARCH_URL (npm run es:start)');
  const dir = corpusDir();
  if (!dir) throw new Error('the Enron corpus (../shared/corpus) is needed');
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const log = createLogger({ logLevel: 'warn' });
  // Outbox rows with every write: what a mirrored installation pays.
  const service = await createMailService({ config, env, logger: log, outbox: true });
  const user = `bench-es-${Date.now()}`;
  try {
    // Import with the outbox on, then drain it.
    process.stderr.write('importing the Enron set into PostgreSQL…\n');
    const imp = await service.transfer.importMail({
      kind: 'mh',
      paths: [path.join(dir, 'enron', 'maildir')],
      user,
      workers: config.importWorkers,
      batchSize: config.batchSize,
      progress: false,
      log,
    });
    await service.analyzeUser(user);
    // Only this run's rows: other users' queued changes are not ours to ship.
    const queued = await service.mirrorBacklog({ user });
    process.stderr.write(`mirroring ${queued} changes into Elasticsearch…\n`);
    const sync = await service.syncMirror();
    const pg = await service.openBackend('pg', user);
    const es = await service.openBackend('es', user);
    const words = { rare: 'happy', common: 'please' };
    const search = {};
    for (const [kind, w] of Object.entries(words)) {
      search[kind] = {
        word: w,
        pg: await time(() => pg.search(w, { limit: 0 })),
        es: await time(() => es.search(w, { limit: 0 })),
      };
    }
    const result = {
      machine: {
        cpus: os.cpus().length,
        cpuModel: os.cpus()[0] && os.cpus()[0].model,
        memGB: Math.round(os.totalmem() / 2 ** 30),
        node: process.version,
        es: (await service.mirrorCluster()).name,
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
    await service.dropMirrorIndexes().catch(() => {});
    await service.close();
  }
}

module.exports = {
  description: 'mirror the Enron set into Elasticsearch; word search ES vs PostgreSQL',
  usage: '(needs ELASTICSEARCH_URL)',
  run: main,
};
