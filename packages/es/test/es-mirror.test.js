'use strict';

/*
 * The Elasticsearch mirror against a real node: pg and es answer the same uids on a real
 * mailbox (Enron), per-user isolation, CLI and HTTP search with backend=es.
 */

const path = require('node:path');
const fs = require('node:fs');
const { useCliSuite } = require('@mailgate/test-support/db');
const { corpusDir } = require('@mailgate/test-support/corpus');
const { describeEs } = require('@mailgate/test-support/es');
const { msg, mboxOf } = require('@mailgate/test-support/mail');
const { openMirror } = require('@mailgate/es');

jest.setTimeout(300000);

const suite = useCliSuite('esm');

// Every operator ES answers, on words that occur in this mailbox. body:/text: are pg-only
// (ES_UNSUPPORTED_QUERY): see packages/es/README.md "Operators".
const QUERIES = [
  '',
  'meeting',
  'gas',
  'power',
  'deal',
  'gas price',
  '"let me know"',
  '"natural gas"',
  'meeting OR conference',
  'gas -price',
  '-meeting',
  'subject:re',
  'subject:meeting',
  'from:enron.com',
  'from:Eric',
  'to:enron',
  'cc:enron',
  '-cc:enron',
  'has:attachment',
  'is:read',
  'is:unread',
  'is:flagged',
  '-is:flagged',
  'before:2001-11-01',
  'after:2001-06-01',
  'on:2001-10-15',
  '-before:2001-01-01',
  'larger:5k',
  'smaller:2k',
  'larger:2k smaller:10k',
  // No in: here: bass-e's only MH folder is stored as `inbox`, which in: cannot name (the
  // parser reads any case of INBOX as INBOX, RFC 3501 5.1), and in:INBOX, which used to
  // answer 0 hits silently, is now INVALID_QUERY. in: is covered by the service conformance.
  '(gas OR power) after:2001-01-01 -is:read',
  'subject:"RE:" -from:enron',
];

describeEs('packages/es/test/es-mirror.test.js', 'Elasticsearch mirror: search parity', (es) => {
  const env = () => ({ ELASTICSEARCH_URL: es.url, MAILGATE_ES_PREFIX: es.prefix });
  let mirror;
  let ann;
  let ben;
  let skipCorpus = false;

  beforeAll(async () => {
    if (es.skipped()) return;
    const dir = corpusDir();
    if (!dir) {
      skipCorpus = true;
      console.log(
        'skipping corpus parts of packages/es/test/es-mirror.test.js: ../shared/corpus missing',
      );
      return;
    }
    const src = path.join(dir, 'enron', 'maildir', 'bass-e');
    const r = suite.cli(['import', 'mh', src, '--user', 'ann', '--json', '--quiet'], {
      env: env(),
    });
    expect(r.code).toBe(0);
    expect(r.json.imported).toBeGreaterThan(200);
    const other = path.join(suite.tmp, 'ben.mbox');
    fs.writeFileSync(
      other,
      mboxOf([msg({ subject: 'zyzzyva only for ben', body: 'gas meeting price\n' })]),
    );
    expect(
      suite.cli(['import', 'mbox', other, '--user', 'ben', '--mailbox', 'INBOX'], { env: env() })
        .code,
    ).toBe(0);
    mirror = openMirror({ elasticsearchUrl: es.url }, suite.db.store, {
      env: { MAILGATE_ES_PREFIX: es.prefix },
    });
    ann = await suite.db.store.getUser('ann');
    ben = await suite.db.store.getUser('ben');
    // Some flags so is: queries have both answers.
    const store = new (require('@mailgate/store').PgStore)(suite.db.knex, { outbox: true });
    const mb = (await store.listMailboxes(ann.id))[0];
    const box = await store.getMailbox(ann.id, mb.name);
    await store.setFlags(ann.id, box.id, { query: 'gas', add: ['\\Flagged'] });
    await store.setFlags(ann.id, box.id, { query: 'meeting', add: ['\\Seen'] });
  });
  afterAll(async () => {
    if (mirror) await mirror.close();
  });

  test('es sync drains the outbox and es verify finds no drift', () => {
    if (es.skipped() || skipCorpus) return;
    const s = suite.cli(['es', 'sync', '--json'], { env: env() });
    expect(s.code).toBe(0);
    expect(s.json.pending).toBe(0);
    expect(s.json.rows).toBeGreaterThan(200);
    const v = suite.cli(['es', 'verify', '--json'], { env: env() });
    expect(v.json.ok).toBe(true);
    expect(v.code).toBe(0);
  });

  test('backend=es and backend=pg return the same uids for every ES operator', async () => {
    if (es.skipped() || skipCorpus) return;
    const { searchEs } = require('@mailgate/es');
    const counts = {};
    const diffs = [];
    const key = (h) => `${h.mailboxId}:${h.uid}`;
    for (const q of QUERIES) {
      const pg = await suite.db.store.search(ann.id, q);
      const e = await searchEs(mirror, ann.id, q);
      counts[q] = pg.total;
      const p = new Set(pg.hits.map(key));
      const x = new Set(e.hits.map(key));
      const onlyEs = [...x].filter((k) => !p.has(k));
      const onlyPg = [...p].filter((k) => !x.has(k));
      if (onlyEs.length || onlyPg.length) diffs.push({ q, onlyEs, onlyPg });
    }
    expect(diffs).toEqual([]);
    // Words inside addresses ("price" in a..price@enron.com) are not words on either backend:
    // ES indexes PostgreSQL's lexemes (README "Word search: one tokenisation").
    for (const q of ['enron', 'price', 'enron.com']) {
      const pg = (await suite.db.store.search(ann.id, q)).hits.map(key);
      const e = (await searchEs(mirror, ann.id, q)).hits.map(key);
      expect(e).toEqual(pg);
    }
    // The set is meaningful: most queries match something and none matches everything.
    const nonEmpty = Object.values(counts).filter((n) => n > 0).length;
    expect(nonEmpty).toBeGreaterThan(QUERIES.length * 0.8);
    console.log(`es/pg parity on ${counts['']} messages:`, JSON.stringify(counts));
  });

  test('results never include another user', async () => {
    if (es.skipped() || skipCorpus) return;
    const { searchEs } = require('@mailgate/es');
    expect((await searchEs(mirror, ann.id, 'zyzzyva')).total).toBe(0);
    expect((await searchEs(mirror, ben.id, 'zyzzyva')).total).toBe(1);
    expect((await searchEs(mirror, ben.id, '')).total).toBe(1);
    // ben's index holds ben's documents only.
    const r = await es.client.search({ index: `${es.prefix}-u${ben.id}`, size: 100 });
    expect(r.hits.hits.map((h) => h._source.user_id)).toEqual([ben.id]);
  });

  test('CLI search --backend es, and body:/text: are refused with a clear code', () => {
    if (es.skipped() || skipCorpus) return;
    const a = suite.cli(['search', 'gas price', '--user', 'ann', '--backend', 'es', '--json'], {
      env: env(),
    });
    const b = suite.cli(['search', 'gas price', '--user', 'ann', '--json'], { env: env() });
    expect(a.code).toBe(0);
    expect(a.json.uids).toEqual(b.json.uids);
    expect(a.json.total).toBeGreaterThan(0);
    const t = suite.cli(['search', 'text:gas', '--user', 'ann', '--backend', 'es'], {
      env: env(),
    });
    expect(t.code).toBe(2);
    expect(t.stderr).toContain('ES_UNSUPPORTED_QUERY');
  });

  test('GET /api/v1/search?backend=es has the pg shape and answers', async () => {
    if (es.skipped() || skipCorpus) return;
    const { build } = require('@mailgate/api');
    // The app's mirror reads the index prefix from the environment.
    process.env.MAILGATE_ES_PREFIX = es.prefix;
    const app = await build({
      knex: suite.db.knex,
      elasticsearchUrl: es.url,
      esWorker: false,
    });
    try {
      await app.ready();
      const token = (await suite.db.store.createToken(ann.id)).token;
      const get = (qs) =>
        app.inject({
          method: 'GET',
          url: `/api/v1/search?${qs}`,
          headers: { authorization: `Bearer ${token}` },
        });
      const pg = await get('q=gas%20price&limit=5');
      const e = await get('q=gas%20price&limit=5&backend=es');
      expect(e.statusCode).toBe(200);
      expect(e.json()).toEqual(pg.json());
      expect(e.headers['server-timing']).toBeDefined();
      const bad = await get('q=body:gas&backend=es');
      expect(bad.statusCode).toBe(400);
      expect(bad.json().error.code).toBe('ES_UNSUPPORTED_QUERY');
    } finally {
      await app.close();
    }
  });
});
