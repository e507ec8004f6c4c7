'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { DOCS, DOC_SHOTS } = require('./support');

/*
 * Every picture of the page that the docs show exists, and is one a browser test step takes
 * (support.js DOC_SHOTS; `npm run screenshots:web` writes them): no hand-made or stale image
 * names, no missing one.
 */

const ROOT = path.join(__dirname, '..', '..', '..');

function markdownFiles() {
  const out = [path.join(ROOT, 'README.md'), path.join(__dirname, '..', 'README.md')];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.md')) out.push(p);
    }
  };
  walk(path.join(ROOT, 'docs'));
  return out;
}

test('every docs/webmail picture referenced exists and is taken by a browser test step', () => {
  const produced = new Set(Object.values(DOC_SHOTS));
  const referenced = new Set();
  for (const file of markdownFiles()) {
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(/\(([^)\s]*webmail\/([\w.-]+\.png))\)/g)) {
      const target = path.resolve(path.dirname(file), m[1]);
      expect([m[1], fs.existsSync(target)]).toEqual([m[1], true]);
      expect([m[1], produced.has(m[2])]).toEqual([m[1], true]);
      referenced.add(m[2]);
    }
  }
  // The README shows the page: at least the mailbox, search with hints and a message.
  for (const name of ['mailbox.png', 'search-hints.png', 'message.png']) {
    expect(referenced).toContain(name);
  }
  // And docs/webmail holds nothing the tests do not make.
  for (const f of fs.readdirSync(DOCS)) expect([f, produced.has(f)]).toEqual([f, true]);
});
