'use strict';

const { skipNotice } = require('@mailgate/test-support/skip');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { listMessages, buildMailbox, compareNames, SIZES } = require('../lib/mailboxes');
const { MboxSplitter } = require('@mailgate/readers');
const { syntheticCorpus } = require('./fixtures');
const { corpusDir } = require('@mailgate/test-support/corpus');

describe('mailbox builder', () => {
  let corpus;
  let work;
  beforeAll(() => {
    corpus = syntheticCorpus(60);
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'mgb-work-'));
  });
  afterAll(() => {
    fs.rmSync(corpus.dir, { recursive: true, force: true });
    fs.rmSync(work, { recursive: true, force: true });
  });

  test('path order: user, then folder, then file number as a number', () => {
    expect(['10', 'inbox', '2', 'a', '1'].sort(compareNames)).toEqual([
      '1',
      '2',
      '10',
      'a',
      'inbox',
    ]);
    const files = listMessages(corpus.dir).map((f) => path.relative(corpus.dir, f));
    expect(files).toEqual(corpus.order);
    expect(listMessages(corpus.dir, 7)).toHaveLength(7);
  });

  test('builds the mbox and Maildir deterministically, and reuses the cache', async () => {
    const a = buildMailbox({ corpus: corpus.dir, work, name: 'tiny', count: 40 });
    expect(a.built).toBe(true);
    const names = fs.readdirSync(path.join(a.maildir, 'cur')).sort();
    expect(names).toHaveLength(40);
    expect(names[0]).toMatch(/^\d+\.M\d+P0\.mailgate-bench:2,$/);
    // mbox: 40 entries, and each Maildir file's bytes come back out of the mbox.
    const entries = [];
    const splitter = new MboxSplitter();
    for await (const e of fs.createReadStream(a.mbox).pipe(splitter)) entries.push(e);
    expect(entries).toHaveLength(40);

    const again = buildMailbox({ corpus: corpus.dir, work, name: 'tiny', count: 40 });
    expect(again.built).toBe(false);
    expect(again.digest).toBe(a.digest);
    // A rebuild from scratch writes the same bytes and names.
    fs.rmSync(path.join(work, 'boxes'), { recursive: true });
    const rebuilt = buildMailbox({ corpus: corpus.dir, work, name: 'tiny', count: 40 });
    expect(rebuilt.built).toBe(true);
    expect(rebuilt.digest).toBe(a.digest);
    expect(fs.readdirSync(path.join(rebuilt.maildir, 'cur')).sort()).toEqual(names);
  });

  test('a corpus too small for the size is an error', () => {
    expect(() => buildMailbox({ corpus: corpus.dir, work, name: 'big', count: 61 })).toThrow(
      /holds 60 messages/,
    );
  });

  const real = corpusDir();
  if (!real)
    skipNotice(
      __filename,
      'the shared corpus (../shared/corpus) is not beside the checkout',
      'study sizes',
    );
  (real ? test : test.skip)('the study sizes from the real Enron corpus', () => {
    const root = path.join(real, 'enron', 'maildir');
    const large = listMessages(root, SIZES.large);
    expect(large).toHaveLength(SIZES.large);
    // The sizes are prefixes of one path order.
    expect(listMessages(root, SIZES.small)).toEqual(large.slice(0, SIZES.small));
    const box = buildMailbox({ corpus: real, work, name: 'small', count: SIZES.small });
    expect(fs.readdirSync(path.join(box.maildir, 'cur'))).toHaveLength(SIZES.small);
    expect(box.files).toEqual(large.slice(0, SIZES.small));
  });
});
