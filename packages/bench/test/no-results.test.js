'use strict';

/*
 * `mailgate bench` never ends with exit 0 and no results. Every backend skipped (es without
 * ELASTICSEARCH_URL, pg-citus without MAILGATE_BENCH_CITUS_URL: the adapters refuse before any
 * work) used to write an empty results.json and exit 0; it now writes nothing and exits 1 with
 * `BENCH_NO_RESULTS: …` naming each size and backend and why. An empty --sizes or --backends
 * selects nothing: bad usage (exit 2) before any mailbox is built. A partial run names the parts
 * that produced nothing (runBench's `empty`, a `NO RESULTS:` line on stderr, the notes).
 * The CLI runs as a user runs it, on a synthetic corpus of the small mailbox's size.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { loadConfig } = require('@mailgate/core');
const { createTestDatabase } = require('@mailgate/test-support/db');
const { runBench } = require('../lib/runner');
const { SIZES } = require('../lib/mailboxes');
const { syntheticCorpus } = require('./fixtures');

const CLI = path.resolve(__dirname, '..', '..', 'cli', 'bin', 'mailgate.js');

let corpus;
let work;

beforeAll(() => {
  corpus = syntheticCorpus(SIZES.small);
});

afterAll(() => {
  if (corpus) fs.rmSync(corpus.dir, { recursive: true, force: true });
});

beforeEach(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'mgb-none-'));
});

afterEach(() => {
  fs.rmSync(work, { recursive: true, force: true });
});

/** `mailgate bench …` with no Elasticsearch or Citus configured. */
function bench(...args) {
  const env = { ...process.env, MAILGATE_HOME: path.join(work, 'home') };
  delete env.ELASTICSEARCH_URL;
  delete env.MAILGATE_BENCH_CITUS_URL;
  delete env.DATABASE_URL;
  const r = spawnSync(
    process.execPath,
    [
      CLI,
      'bench',
      '--corpus',
      corpus.dir,
      '--work',
      work,
      '--out',
      path.join(work, 'out'),
      ...args,
    ],
    { encoding: 'utf8', env },
  );
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('mailgate bench that measures nothing', () => {
  test('every backend skipped: exit 1, BENCH_NO_RESULTS naming each, no results written', () => {
    const r = bench('--backends', 'es,pg-citus', '--runs', '1', '--json');
    expect(r.status).toBe(1);
    const line = r.stderr.split('\n').find((l) => l.startsWith('BENCH_NO_RESULTS: '));
    expect(line).toBe(
      'BENCH_NO_RESULTS: The benchmark produced no results: ' +
        'small es: backend es is not available yet: ELASTICSEARCH_URL is not set; ' +
        'small pg-citus: backend pg-citus is not available yet: MAILGATE_BENCH_CITUS_URL is not set ' +
        '(a database of a Citus cluster: scripts/citus/README.md)',
    );
    // --json: the one object on stdout is the error.
    expect(JSON.parse(r.stdout)).toEqual({
      error: { code: 'BENCH_NO_RESULTS', message: line.slice('BENCH_NO_RESULTS: '.length) },
    });
    expect(fs.existsSync(path.join(work, 'out', 'results.json'))).toBe(false);
  });

  test('an empty --backends or --sizes is bad usage (exit 2) before any mailbox is built', () => {
    for (const args of [
      ['--backends', ''],
      ['--sizes', ' , '],
    ]) {
      const r = bench(...args);
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(/^USAGE: .*no (backend|size) given/m);
      expect(fs.existsSync(path.join(work, 'boxes'))).toBe(false);
    }
  });
});

describe('a partial run', () => {
  test('runBench names the size and backend that produced nothing, and why', async () => {
    const small = syntheticCorpus(30);
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'mgb-part-'));
    const saved = process.env.ELASTICSEARCH_URL;
    delete process.env.ELASTICSEARCH_URL;
    const db = await createTestDatabase();
    try {
      // mbox: the store door on the built mbox file (its user in the test's database); es
      // refuses at creation.
      const run = await runBench({
        corpus: small.dir,
        work: scratch,
        sizes: ['small'],
        sizeCounts: { small: 30 },
        backends: ['es', 'mbox'],
        runs: 1,
        cold: false,
        config: { ...loadConfig({}), databaseUrl: db.url, elasticsearchUrl: null },
      });
      expect(run.empty).toEqual([
        'small es: backend es is not available yet: ELASTICSEARCH_URL is not set',
      ]);
      expect(run.notes).toContain(
        'no results for small es: backend es is not available yet: ELASTICSEARCH_URL is not set',
      );
      expect(run.results.length).toBeGreaterThan(0);
      expect(new Set(run.results.map((r) => r.backend))).toEqual(new Set(['mbox']));
    } finally {
      if (saved !== undefined) process.env.ELASTICSEARCH_URL = saved;
      await db.drop();
      fs.rmSync(small.dir, { recursive: true, force: true });
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  });
});
