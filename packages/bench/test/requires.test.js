'use strict';

/*
 * Every require() written in the packages' code resolves, including the lazy ones inside
 * functions that loading a module never runs. Round 3 moved many files (the bench scripts into
 * packages/bench, the store's migrations and connection, tests into their packages); a lazy
 * require left pointing at an old place only fails when that branch runs — `bench disk`'s
 * Dovecot measurement did, after a full import. Node builtins and package names are resolved
 * from the requiring file's folder, as Node would.
 */

const fs = require('node:fs');
const path = require('node:path');
const { builtinModules } = require('node:module');

const PACKAGES = path.resolve(__dirname, '..', '..');
const REQUIRE = /\brequire\(\s*(['"])([^'"]+)\1\s*\)/g;

/** Every .js file under dir, skipping node_modules and the frozen experiments. */
function jsFiles(dir, out = []) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name === 'experiments') continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) jsFiles(p, out);
    else if (e.name.endsWith('.js')) out.push(p);
  }
  return out;
}

// Comments say why and may quote a require (`require('<spec>')`): only code counts.
const stripComments = (src) =>
  src.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');

/** The unresolvable requires of one file's source, as "file: name". */
function unresolved(file, source) {
  const bad = [];
  for (const m of stripComments(source).matchAll(REQUIRE)) {
    const name = m[2];
    const bare = name.replace(/^node:/, '');
    if (name.startsWith('node:') || builtinModules.includes(bare)) continue;
    try {
      require.resolve(name, { paths: [path.dirname(file)] });
    } catch {
      bad.push(`${path.relative(PACKAGES, file)}: ${name}`);
    }
  }
  return bad;
}

test('every require in packages/*/lib and bin resolves', () => {
  const files = [];
  for (const pkg of fs.readdirSync(PACKAGES)) {
    for (const sub of ['lib', 'bin']) {
      const dir = path.join(PACKAGES, pkg, sub);
      if (fs.existsSync(dir)) jsFiles(dir, files);
    }
  }
  expect(files.length).toBeGreaterThan(100);
  const bad = files.flatMap((f) => unresolved(f, fs.readFileSync(f, 'utf8')));
  expect(bad).toEqual([]);
});

test('a lazy require of a missing file is reported', () => {
  const file = path.join(PACKAGES, 'bench', 'lib', 'commands', 'disk.js');
  const planted = "function later() {\n  return require('./dovecot/dovecot.js');\n}\n";
  expect(unresolved(file, planted)).toEqual(['bench/lib/commands/disk.js: ./dovecot/dovecot.js']);
});
