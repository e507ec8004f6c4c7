'use strict';

/*
 * The documentation's shape (issue 31.5): the front door README.md stays at most 250 lines,
 * the benchmark report docs/benchmarks.md at most 400, and no relative link in README.md,
 * docs/*.md or packages/*\/README.md points at a file that is not there. The checks run on the
 * repository and, to prove they can fail, on a planted copy.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..', '..');

/** Line limits of the two documents issue 31.5 keeps short. */
const LIMITS = { 'README.md': 250, 'docs/benchmarks.md': 400 };

/** The Markdown files whose links are checked, relative to `root`. */
function documents(root) {
  const out = ['README.md'];
  const docs = path.join(root, 'docs');
  if (fs.existsSync(docs))
    for (const f of fs.readdirSync(docs)) if (f.endsWith('.md')) out.push(`docs/${f}`);
  const pkgs = path.join(root, 'packages');
  for (const p of fs.existsSync(pkgs) ? fs.readdirSync(pkgs) : [])
    if (fs.existsSync(path.join(pkgs, p, 'README.md'))) out.push(`packages/${p}/README.md`);
  return out.filter((f) => fs.existsSync(path.join(root, f)));
}

/**
 * The link targets of a Markdown text outside code: inline `[text](target)` and `![alt](src)`,
 * and reference definitions `[name]: target`.
 * @param {string} text
 * @returns {string[]}
 */
function linkTargets(text) {
  const prose = text.replace(/^(```|~~~)[\s\S]*?^\1/gm, '').replace(/`[^`\n]*`/g, '');
  const out = [];
  for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push(m[1]);
  for (const m of prose.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)) out.push(m[1]);
  return out;
}

/** Problems: documents over their limit, relative links to missing files. */
function checkDocs(root) {
  const problems = [];
  for (const [file, max] of Object.entries(LIMITS)) {
    const p = path.join(root, file);
    if (!fs.existsSync(p)) continue;
    const lines = fs.readFileSync(p, 'utf8').replace(/\n$/, '').split('\n').length;
    if (lines > max) problems.push(`${file}: ${lines} lines (at most ${max})`);
  }
  for (const file of documents(root)) {
    const text = fs.readFileSync(path.join(root, file), 'utf8');
    for (const target of linkTargets(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue;
      const rel = decodeURIComponent(target.split('#')[0].split('?')[0]);
      const abs = path.resolve(path.dirname(path.join(root, file)), rel);
      if (!fs.existsSync(abs)) problems.push(`${file}: link to missing ${target}`);
    }
  }
  return problems;
}

describe('documentation', () => {
  test('README.md ≤ 250 lines, docs/benchmarks.md ≤ 400, every relative link resolves', () => {
    expect(checkDocs(ROOT)).toEqual([]);
  });

  test('links inside code are not links; external and in-page links are not files', () => {
    expect(
      linkTargets(
        '[a](x.md) `[b](not-a-link.md)` ![c](img/c.png "t") [d](https://e.org) [f](#g)\n' +
          '```\n[h](in-code.md)\n```\n[i]: ../ref.md\n',
      ),
    ).toEqual(['x.md', 'img/c.png', 'https://e.org', '#g', '../ref.md']);
  });

  test('the check fails on a planted long README and a planted broken link', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-docs-'));
    try {
      fs.mkdirSync(path.join(root, 'docs'));
      fs.mkdirSync(path.join(root, 'packages', 'x'), { recursive: true });
      fs.writeFileSync(path.join(root, 'docs', 'benchmarks.md'), '# ok\n[up](../README.md)\n');
      fs.writeFileSync(path.join(root, 'packages', 'x', 'README.md'), '[d](../../docs/gone.md)\n');
      fs.writeFileSync(path.join(root, 'README.md'), '[b](docs/benchmarks.md#x)\n');
      expect(checkDocs(root)).toEqual(['packages/x/README.md: link to missing ../../docs/gone.md']);
      fs.writeFileSync(path.join(root, 'README.md'), 'line\n'.repeat(251));
      expect(checkDocs(root)).toEqual([
        'README.md: 251 lines (at most 250)',
        'packages/x/README.md: link to missing ../../docs/gone.md',
      ]);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
