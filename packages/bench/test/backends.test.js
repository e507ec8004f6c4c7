'use strict';

const { skipNotice } = require('@mailgate/test-support/skip');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { loadConfig } = require('@mailgate/core');
const { createTestDatabase } = require('@mailgate/test-support/db');
const { runBench } = require('../lib/runner');
const { createBackend, BackendUnavailable } = require('../lib/backends');
const { buildMailbox } = require('../lib/mailboxes');
const { messageKey } = require('../lib/keys');
const { syntheticCorpus } = require('./fixtures');

const dovecot = require('@mailgate/dovecot');
const withDovecot = dovecot.installed() && process.getuid && process.getuid() === 0;
if (!withDovecot)
  skipNotice(__filename, 'Dovecot needs dovecot-imapd and root', 'Dovecot backends');

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

  test('es without ELASTICSEARCH_URL is unavailable (the runner skips it with a note)', () => {
    const config = { ...loadConfig({}), elasticsearchUrl: null };
    const saved = process.env.ELASTICSEARCH_URL;
    delete process.env.ELASTICSEARCH_URL;
    try {
      expect(() => createBackend('es', { work, size: 'small', config })).toThrow(
        BackendUnavailable,
      );
    } finally {
      if (saved !== undefined) process.env.ELASTICSEARCH_URL = saved;
    }
  });

  test.each(['mbox', 'maildir'])(
    'direct %s: expunge works on its own copy, restore brings the mailbox back',
    async (format) => {
      const box = buildMailbox({ corpus: corpus.dir, work, name: 'direct', count: 300 });
      const pristine = fs.readdirSync(path.join(box.maildir, 'cur')).length;
      const mboxBytes = fs.statSync(box.mbox).size;
      const b = createBackend(format, { work, size: 'direct', log: () => {} });
      try {
        expect(b.wordSearch).toBe(false);
        expect(await b.load(box)).toMatchObject({ messages: 300 });
        expect(await b.firstOpen()).toEqual({ count: 300 });
        await b.ready();
        const all = b.keysOf((await b.headers()).ids);
        expect(all).toEqual(box.files.map((f) => messageKey(fs.readFileSync(f))));
        const zebra = b.keysOf((await b.search('text:zebra')).ids);
        expect(zebra).toHaveLength(3);
        const victims = [all[0], all[150], all[299]];
        const gone = await b.expunge(victims);
        expect(b.keysOf(gone.ids)).toEqual(victims);
        expect((await b.headers()).ids).toHaveLength(297);
        expect((await b.search('text:zebra')).ids).toHaveLength(2); // message 0 had zebra
        // The built mailbox is untouched (Maildir files are hard links, the mbox a copy).
        expect(fs.readdirSync(path.join(box.maildir, 'cur'))).toHaveLength(pristine);
        expect(fs.statSync(box.mbox).size).toBe(mboxBytes);
        await b.restore();
        expect(b.keysOf((await b.headers()).ids)).toEqual(all);
        expect(b.keysOf((await b.fetchOne(all[150])).ids)).toEqual([all[150]]);
      } finally {
        await b.close();
      }
    },
  );

  test(`pg, pg through the API, mbox, maildir${withDovecot ? ' and Dovecot (mbox, maildir)' : ''} agree on every request`, async () => {
    const config = { ...loadConfig({}), databaseUrl: db.url, importWorkers: 0 };
    const backends = ['pg', 'pg-api', 'mbox', 'maildir', 'mailgate-imap'];
    if (withDovecot) backends.push('dovecot-mbox', 'dovecot-maildir');
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
    // The list view in the store door: pg from its own cache, the files through their scan.
    expect(get('pg', 'headers_list')).toMatchObject({ matches: 300, agrees: true });
    expect(get('pg', 'headers_list', 'cold')).toMatchObject({ matches: 300, agrees: true });
    const wrong = run.results.filter((r) => !r.agrees);
    expect(wrong).toEqual([]);
    // Through HTTP: the same answers, every request timed, cold included (server rebuilt).
    const viaApi = run.results.filter((r) => r.backend === 'pg-api');
    expect(
      viaApi
        .filter((r) => r.phase === 'warm')
        .map((r) => r.request)
        .sort(),
    ).toEqual(
      run.results
        // the API has no list-view route
        .filter((r) => r.backend === 'pg' && r.phase === 'warm' && r.request !== 'headers_list')
        .map((r) => r.request)
        .sort(),
    );
    expect(get('pg-api', 'headers_list')).toBeUndefined();
    expect(get('pg-api', 'expunge_20pct')).toMatchObject({ matches: 60, agrees: true });
    // The second sample expunged the same messages by the same uids: the restore between
    // them un-hid the rows the API's expunge hid (its purge is off), no re-import.
    expect(get('pg-api', 'expunge_20pct').samples).toHaveLength(2);
    expect(get('pg-api', 'headers', 'cold')).toMatchObject({ matches: 300, agrees: true });
    for (const format of ['mbox', 'maildir']) {
      expect(get(format, 'import')).toMatchObject({ matches: 300, agrees: true });
      expect(get(format, 'text_common').matches).toBe(75);
      expect(get(format, 'expunge_1pct')).toMatchObject({ matches: 3, agrees: true });
      expect(get(format, 'word_rare')).toBeUndefined();
      expect(get(format, 'date', 'cold')).toMatchObject({ matches: 3, agrees: true });
      expect(get(format, 'headers_list')).toMatchObject({ matches: 300, agrees: true });
    }
    // mailgate's IMAP server on pg, through the same raw client as Dovecot: same answers,
    // both header variants, every result in the imap door.
    expect(get('mailgate-imap', 'headers')).toMatchObject({ matches: 300, agrees: true });
    expect(get('mailgate-imap', 'headers_list')).toMatchObject({ matches: 300, agrees: true });
    expect(get('mailgate-imap', 'expunge_20pct')).toMatchObject({ matches: 60, agrees: true });
    expect(get('mailgate-imap', 'headers', 'cold')).toMatchObject({ matches: 300, agrees: true });
    // The cold first open (SELECT after a restart, timed) in every door.
    for (const b of ['mailgate-imap', 'pg', 'mbox'])
      expect(get(b, 'first_open', 'cold')).toMatchObject({ matches: 300, agrees: true });
    const doorOf = (b) => [
      ...new Set(run.results.filter((r) => r.backend === b).map((r) => r.door)),
    ];
    expect(doorOf('mailgate-imap')).toEqual(['imap']);
    expect(doorOf('pg')).toEqual(['store']);
    expect(doorOf('pg-api')).toEqual(['api']);
    if (withDovecot) {
      expect(get('dovecot-maildir', 'text_common').matches).toBe(75);
      expect(get('dovecot-mbox', 'word_rare')).toBeUndefined();
      expect(doorOf('dovecot-mbox')).toEqual(['imap']);
      expect(get('dovecot-maildir', 'headers_list')).toMatchObject({ matches: 300, agrees: true });
    }
  }, 400000);

  const esUrl = process.env.ELASTICSEARCH_URL;
  if (!esUrl) skipNotice(__filename, 'ELASTICSEARCH_URL is not set', 'es requests');
  (esUrl ? test : test.skip)(
    'es answers the word, sender and date requests as pg does',
    async () => {
      const config = {
        ...loadConfig({}),
        databaseUrl: db.url,
        importWorkers: 0,
        elasticsearchUrl: esUrl,
      };
      const run = await runBench({
        corpus: corpus.dir,
        work,
        sizes: ['small'],
        sizeCounts: { small: 300 },
        backends: ['pg', 'es', 'es-api'],
        runs: 1,
        cold: false,
        dropCaches: false,
        config,
      });
      const es = run.results.filter((r) => r.backend === 'es');
      expect(es.map((r) => r.request).sort()).toEqual(
        ['date', 'from', 'import', 'word_common', 'word_free', 'word_happy', 'word_rare'].sort(),
      );
      for (const r of es) expect(r).toMatchObject({ agrees: true });
      const esApi = run.results.filter((r) => r.backend === 'es-api');
      expect(esApi.map((r) => r.request).sort()).toEqual(es.map((r) => r.request).sort());
      for (const r of esApi) expect(r).toMatchObject({ agrees: true });
      expect(es.find((r) => r.request === 'word_common').matches).toBe(75);
      expect(run.notes.some((n) => /^es: not applicable: .*headers.*text_rare/.test(n))).toBe(true);
    },
  );
});
