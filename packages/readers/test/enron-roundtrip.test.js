'use strict';

// Property test on real mail: Enron messages → mbox → MboxSplitter → same bytes.
const { skipNotice } = require('@mailgate/test-support/skip');
const fs = require('fs');
const path = require('path');
const { makeFromLine, escapeMessage, exportEntry } = require('../lib');
const { split, rebuild, expectTiling, rng } = require('./helpers');
const { corpusDir } = require('@mailgate/test-support/corpus');

const dir = corpusDir();
const enron = dir && path.join(dir, 'enron', 'maildir');
const maybe = enron && fs.existsSync(enron) ? describe : describe.skip;
if (maybe === describe.skip)
  skipNotice(__filename, 'the Enron corpus (../shared/corpus) is not beside the checkout');

/** A deterministic ~0.7% sample of the whole tree (a few hundred files). */
function pickFiles() {
  const all = [];
  (function walk(d) {
    const ents = fs.readdirSync(d, { withFileTypes: true });
    ents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const ent of ents) {
      const p = path.join(d, ent.name);
      if (ent.isDirectory()) walk(p);
      else all.push(p);
    }
  })(enron);
  const r = rng(7);
  return all.filter(() => r() < 0.007);
}

maybe('Enron round trip', () => {
  let raws;
  beforeAll(() => {
    raws = pickFiles().map((p) => fs.readFileSync(p));
    // Make sure the tricky cases are really covered: lines that are or look like From_ lines.
    raws.push(
      Buffer.concat([raws[0], Buffer.from('\n\nFrom me@x Sat Jan  3 01:05:34 1996\n>From a\n')]),
      Buffer.concat([raws[1], Buffer.from('\nFrom here on\n>>From b\n')]),
    );
  });

  test('the sample contains From and >From body lines', () => {
    expect(raws.length).toBeGreaterThan(200);
    expect(raws.filter((r) => /^From /m.test(r.toString('latin1'))).length).toBeGreaterThan(1);
    expect(raws.filter((r) => /^>+From /m.test(r.toString('latin1'))).length).toBeGreaterThan(1);
  });

  test('mboxrd: split returns each message and formatMboxEntry rebuilds the file', async () => {
    // mboxrd cannot represent a missing final newline; the writer adds one (see exportEntry).
    const expected = raws.map((r) =>
      r[r.length - 1] === 0x0a ? r : Buffer.concat([r, Buffer.from('\n')]),
    );
    const file = Buffer.concat(
      expected.map((r, i) =>
        Buffer.concat([
          makeFromLine('sender@enron.com', new Date(Date.UTC(2001, 0, 1 + i))),
          escapeMessage(r, 'mboxrd'),
          Buffer.from('\n'),
        ]),
      ),
    );
    for (const chunk of [() => 65536, () => 1 + Math.floor(Math.random() * 3000)]) {
      const entries = await split(file, { variant: 'mboxrd' }, chunk);
      expect(entries).toHaveLength(expected.length);
      expectTiling(entries, file.length);
      entries.forEach((e, i) => {
        expect(e.error).toBeNull();
        expect(e.raw.equals(expected[i])).toBe(true);
      });
      expect(rebuild(entries).equals(file)).toBe(true);
    }
    // Auto mode must also rebuild exactly, whatever variant it guesses per message.
    const auto = await split(file);
    expect(auto).toHaveLength(expected.length);
    expect(rebuild(auto).equals(file)).toBe(true);
  });

  test('mboxcl2: raw comes back exactly, also without final newline', async () => {
    const file = Buffer.concat(raws.map((r) => exportEntry(r, 'mboxcl2')));
    const entries = await split(file, { variant: 'mboxcl2' }, () => 4093);
    expect(entries).toHaveLength(raws.length);
    entries.forEach((e, i) => {
      expect(e.variant).toBe('mboxcl2');
      const body = (s) => s.toString('latin1').replace(/^Content-Length: \d+\n/im, '');
      expect(body(e.raw)).toBe(body(raws[i]));
    });
    expect(rebuild(entries).equals(file)).toBe(true);
    // In auto mode a ">From " body line makes the entry "mboxcl" (and unescaped); bytes stay exact.
    const auto = await split(file);
    expect(auto).toHaveLength(raws.length);
    expect(auto.some((e) => e.variant === 'mboxcl')).toBe(true);
    expect(rebuild(auto).equals(file)).toBe(true);
  });
});
