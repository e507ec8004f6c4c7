'use strict';

/*
 * Every command the documentation tells a reader to run exists: each `scripts/…` path and
 * `packages/<pkg>/bin/…` path named in any README.md (bench/results' notes included: they give
 * the exact command behind a figure) or docs/*.md, and each `npm run X`. Commands are run from
 * the repository root (the README's contract), so a path is resolved from there; a path that
 * starts with `./` or `../` is a link and resolves from its document (docs.test.js checks links
 * too). `npm run X` needs X among the root package.json's scripts; `npm run bench:…` or
 * `npm run bench:<command>` names a family and needs one script of that prefix. Round 3 moved
 * scripts into packages and the docs kept naming `scripts/scan-tree.js`, which is not there from
 * the root: this is the check that catches it.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..', '..');

/** Every README.md under root (not node_modules or .git) and every docs/*.md, relative. */
function documents(root) {
  const out = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name === 'README.md') out.push(path.relative(root, p));
    }
  };
  walk(root);
  const docs = path.join(root, 'docs');
  if (fs.existsSync(docs))
    for (const f of fs.readdirSync(docs)) if (f.endsWith('.md')) out.push(`docs/${f}`);
  return out.sort();
}

// A path token: optional leading folders, then scripts/ or packages/<pkg>/bin/, then the rest.
// Not preceded by a path character, so `packages/x/scripts/y` is read whole.
const PATH =
  /(?<![\w./-])((?:\.{1,2}\/)*(?:[\w.-]+\/)*(?:scripts\/|packages\/[\w-]+\/bin\/)[\w./-]*)/g;
const NPM_RUN = /\bnpm run ([\w:.-]+)(<|…)?/g;

/**
 * The commands of one document that do not exist, as "file:line: what".
 * @param {string} root the repository
 * @param {string} file relative to root
 * @param {Record<string, string>} scripts the root package.json's scripts
 * @returns {string[]}
 */
function missingIn(root, file, scripts) {
  const problems = [];
  const lines = fs.readFileSync(path.join(root, file), 'utf8').split('\n');
  lines.forEach((line, i) => {
    const at = `${file}:${i + 1}`;
    for (const m of line.matchAll(PATH)) {
      // A sentence may end right after the path.
      const p = m[1].replace(/[.,:;]+$/, '');
      // `../x` is a link from its document; `./x` either that or a require() from the root.
      const here = path.dirname(path.join(root, file));
      const bases = p.startsWith('../') ? [here] : p.startsWith('./') ? [here, root] : [root];
      if (!bases.some((b) => fs.existsSync(path.resolve(b, p)))) problems.push(`${at}: no ${p}`);
    }
    for (const m of line.matchAll(NPM_RUN)) {
      const name = m[1];
      const known = m[2]
        ? Object.keys(scripts).some((s) => s.startsWith(name))
        : Object.hasOwn(scripts, name);
      if (!known) problems.push(`${at}: no npm script ${name}${m[2] || ''}`);
    }
  });
  return problems;
}

/** Every missing command named by the documents of root. */
function checkCommands(root) {
  const { scripts = {} } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  return documents(root).flatMap((f) => missingIn(root, f, scripts));
}

describe('commands named in the documentation', () => {
  test('every scripts/…, packages/…/bin/… path and npm run X of the docs exists', () => {
    expect(checkCommands(ROOT)).toEqual([]);
  });

  test('the check fails on planted missing paths and scripts, and passes what exists', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-doccmd-'));
    try {
      fs.mkdirSync(path.join(root, 'docs'));
      fs.mkdirSync(path.join(root, 'scripts', 'tool'), { recursive: true });
      fs.mkdirSync(path.join(root, 'packages', 'r', 'scripts'), { recursive: true });
      fs.mkdirSync(path.join(root, 'packages', 'r', 'bin'), { recursive: true });
      fs.writeFileSync(path.join(root, 'scripts', 'tool', 'run.sh'), '');
      fs.writeFileSync(path.join(root, 'packages', 'r', 'scripts', 'scan.js'), '');
      fs.writeFileSync(path.join(root, 'packages', 'r', 'bin', 'r.js'), '');
      fs.writeFileSync(
        path.join(root, 'package.json'),
        JSON.stringify({ scripts: { demo: 'x', 'bench:import': 'y' } }),
      );
      fs.writeFileSync(
        path.join(root, 'README.md'),
        'Run `bash scripts/tool/run.sh start`, then `npm run demo` or `npm run bench:<command>`.\n' +
          'See [tool](scripts/tool/run.sh) and `node packages/r/bin/r.js`.\n',
      );
      // The old readers README: a path that exists only from the package's own folder.
      fs.writeFileSync(
        path.join(root, 'packages', 'r', 'README.md'),
        '`node scripts/scan.js <path>` counts messages; [up](../../scripts/tool/run.sh).\n' +
          'Or `node packages/r/scripts/scan.js`.\n',
      );
      fs.writeFileSync(
        path.join(root, 'docs', 'x.md'),
        '`npm run bench:disk` and `npm run lint`; `packages/r/bin/gone.js`; scripts/old.js.\n',
      );
      expect(checkCommands(root)).toEqual([
        'docs/x.md:1: no packages/r/bin/gone.js',
        'docs/x.md:1: no scripts/old.js',
        'docs/x.md:1: no npm script bench:disk',
        'docs/x.md:1: no npm script lint',
        'packages/r/README.md:1: no scripts/scan.js',
      ]);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
