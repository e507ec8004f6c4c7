'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { loadConfig } = require('@mailgate/core');
const { createTestDatabase } = require('../../../test/support/db');
const { runBench } = require('../lib/runner');
const { createBackend, BackendUnavailable } = require('../lib/backends');
const { syntheticCorpus } = require('./fixtures');

const dovecot = require('../../../scripts/dovecot/dovecot.js');
const withDovecot = dovecot.installed() && process.getuid && process.getuid() === 0;

describe('backend adapters', () => {
  let db;
  let corpus;
  let work;
  beforeAll(async () => {
    db = await createTestDatabase();
    corpus = syntheticCorpus(300);
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'mgb-be-'));
  });
  afterAll(async () => {
    await db.drop();
    fs.rmSync(corpus.dir, { recursive: true, force: true });
    fs.rmSync(work, { recursive: true, force: true });
  });

  test('pending backends throw "not available yet"', () => {
    for (const name of ['es', 'mbox', 'maildir']) {
      expect(() => createBackend(name, { work })).toThrow(BackendUnavailable);
      expect(() => createBackend(name, { work })).toThrow(/not available yet/);
    }
  });

  test(`pg${withDovecot ? ' and Dovecot (mbox, maildir)' : ''} agree on every request`, async () => {
    const config = { ...loadConfig({}), databaseUrl: db.url, importWorkers: 0 };
    const backends = withDovecot ? ['pg', 'dovecot-mbox', 'dovecot-maildir'] : ['pg'];
    const run = await runBench({
      corpus: corpus.dir,
      work,
      sizes: ['small'],
      sizeCounts: { small: 300 },
      backends,
      runs: 2,
      cold: true,
      dropCaches: false,
      config,
    });
    const get = (b, r, phase = 'warm') =>
      run.results.find((x) => x.backend === b && x.request === r && x.phase === phase);
    expect(get('pg', 'import')).toMatchObject({ matches: 300, agrees: true });
    expect(get('pg', 'headers').matches).toBe(300);
    expect(get('pg', 'text_rare').matches).toBe(3);
    expect(get('pg', 'word_common').matches).toBe(75);
    expect(get('pg', 'from').matches).toBe(3);
    expect(get('pg', 'date').matches).toBe(3);
    expect(get('pg', 'expunge_20pct')).toMatchObject({ matches: 60, agrees: true });
    expect(get('pg', 'fetch_one')).toMatchObject({ matches: 1, agrees: true });
    expect(get('pg', 'headers', 'cold')).toMatchObject({ matches: 300, agrees: true });
    const wrong = run.results.filter((r) => !r.agrees);
    expect(wrong).toEqual([]);
    if (withDovecot) {
      expect(get('dovecot-maildir', 'text_common').matches).toBe(75);
      expect(get('dovecot-mbox', 'word_rare')).toBeUndefined();
    }
  });
});
