'use strict';

/*
 * Issue 11's boundaries for the CLI and the importer: no SQL or knex (only @mailgate/store and
 * migrations/ write SQL), no store or backend constructed in the CLI (it reaches mail through
 * @mailgate/service's openBackend), no deep import into another package's lib/, and no lib/
 * requiring test/ or scripts/. Other packages can join the list below once they comply.
 */

const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const CHECKED = ['packages/cli', 'packages/importer'];

function sources(dir, out = []) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory() && !['node_modules', 'test'].includes(e.name)) sources(p, out);
    else if (e.isFile() && e.name.endsWith('.js')) out.push(p);
  }
  return out;
}

// Comments may name these (JSDoc types, explanations); code may not.
const stripComments = (src) => src.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');

const RULES = [
  ['knex', /\bknex\b/],
  ['raw SQL', /\.raw\(|\b(?:SELECT\s+[\w*(]|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM)\b/],
  ['deep import', { test: (code) => deepImports(code).length > 0 }],
  ['lib requiring test/ or scripts/', /require\([^)]*['/](?:test|scripts)\//],
];
/**
 * Requires of another package's inner path. A subpath the package itself publishes in its
 * `exports` map (e.g. `@mailgate/store/header-row`, pure and light enough for parse threads)
 * is its public API, not a deep import.
 */
function deepImports(code) {
  const out = [];
  for (const m of code.matchAll(/require\(\s*'@mailgate\/([\w-]+)\/([^']+)'/g)) {
    if (m[2] === 'package.json') continue;
    let exported = {};
    try {
      exported = require(path.join(ROOT, 'packages', m[1], 'package.json')).exports || {};
    } catch {
      // an unknown package: reported as a deep import
    }
    if (!(typeof exported === 'object' && `./${m[2]}` in exported)) out.push(m[0]);
  }
  return out;
}

const CLI_RULES = [
  ['store package in the CLI', /require\(\s*'@mailgate\/store'/],
  ['backend constructed in the CLI', /new\s+(?:PgStore|MboxBackend|MaildirBackend|ImapBackend)\b/],
];

test('the CLI and the importer hold no SQL, no deep imports, no test/ or scripts/ requires', () => {
  const found = [];
  for (const pkg of CHECKED) {
    const rules = pkg === 'packages/cli' ? [...RULES, ...CLI_RULES] : RULES;
    for (const file of sources(path.join(ROOT, pkg))) {
      const code = stripComments(fs.readFileSync(file, 'utf8'));
      for (const [what, re] of rules) {
        if (re.test(code)) found.push(`${path.relative(ROOT, file)}: ${what}`);
      }
    }
  }
  expect(found).toEqual([]);
});

test('each checked manifest declares exactly the @mailgate packages its code requires', () => {
  for (const pkg of CHECKED) {
    const manifest = require(path.join(ROOT, pkg, 'package.json'));
    const declared = Object.keys(manifest.dependencies || {})
      .filter((d) => d.startsWith('@mailgate/'))
      .sort();
    const used = new Set();
    for (const file of sources(path.join(ROOT, pkg))) {
      const code = stripComments(fs.readFileSync(file, 'utf8'));
      for (const m of code.matchAll(/require\(\s*'(@mailgate\/[\w-]+)/g)) used.add(m[1]);
    }
    expect({ pkg, requires: [...used].sort() }).toEqual({ pkg, requires: declared });
    expect(manifest.exports).toBeDefined();
  }
});
