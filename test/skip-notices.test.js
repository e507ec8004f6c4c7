'use strict';

/*
 * Every test file that can skip (outside CI: no Elasticsearch, Dovecot, corpus, …) prints its
 * name and the reason: through skipNotice or skipOutsideCI (@mailgate/test-support/skip) or describeEs
 * (@mailgate/test-support/es, which prints `skipping <file>: <reason>`).
 */

const fs = require('node:fs');
const path = require('node:path');
const { filesBelow } = require('@mailgate/test-support/files');

const ROOT = path.resolve(__dirname, '..');
const SKIPS =
  /\b(?:describe|test|it)\.skip\b|\?\s*(?:describe|test|it)\s*:\s*(?:describe|test|it)\.skip/;

const testFiles = (dir) => filesBelow(dir, '.test.js');

test('every skipping test file prints its name and the reason', () => {
  const files = [...testFiles(path.join(ROOT, 'test')), ...testFiles(path.join(ROOT, 'packages'))];
  expect(files.length).toBeGreaterThan(30);
  const silent = [];
  for (const f of files) {
    const src = fs.readFileSync(f, 'utf8');
    const rel = path.relative(ROOT, f);
    if (f === __filename) continue;
    if (!SKIPS.test(src) && !src.includes('describeEs(')) continue;
    const notice =
      /(?:skipNotice|skipOutsideCI|singlePostgresOnly)\(\s*__filename/.test(src) ||
      new RegExp(`describeEs\\(\\s*'${rel.replace(/[.]/g, '\\.')}'`).test(src);
    if (!notice) silent.push(rel);
  }
  expect(silent).toEqual([]);
});

test('skipNotice prints the file relative to the repository and the reason', () => {
  const { skipNotice } = require('@mailgate/test-support/skip');
  const log = jest.spyOn(console, 'log').mockImplementation(() => {});
  try {
    skipNotice(path.join(ROOT, 'packages', 'x', 'test', 'y.test.js'), 'no corpus', 'real mail');
    expect(log).toHaveBeenCalledWith('skipping packages/x/test/y.test.js › real mail: no corpus');
  } finally {
    log.mockRestore();
  }
});

test('skipOutsideCI: no reason runs; a reason prints the notice outside CI and fails in CI', () => {
  const file = path.join(ROOT, 'test', 'y.test.js');
  const load = (ci) => {
    const saved = process.env.CI;
    process.env.CI = ci;
    let mod;
    try {
      jest.isolateModules(() => {
        mod = require('@mailgate/test-support/skip');
      });
    } finally {
      if (saved === undefined) delete process.env.CI;
      else process.env.CI = saved;
    }
    return mod;
  };
  const log = jest.spyOn(console, 'log').mockImplementation(() => {});
  try {
    const outside = load('false');
    expect(outside.skipOutsideCI(file, null)).toBeNull();
    expect(outside.skipOutsideCI(file, 'no dovecot', 'imap')).toBe('no dovecot');
    expect(log).toHaveBeenCalledWith('skipping test/y.test.js › imap: no dovecot');
    const ci = load('true');
    expect(ci.skipOutsideCI(file, null)).toBeNull();
    expect(() => ci.skipOutsideCI(file, 'no dovecot')).toThrow(
      'test/y.test.js must run in CI: no dovecot',
    );
    expect(log).toHaveBeenCalledTimes(1);
  } finally {
    log.mockRestore();
  }
});
