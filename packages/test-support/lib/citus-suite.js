'use strict';

/*
 * Which test files the Citus variant of the suite runs (jest.citus.config.js, `npm run
 * test:citus`; docs/scaling-out.md "The test suite on the cluster"). The rule, not a list:
 *
 *   every test file of the store, service, IMAP and API packages that makes a test database
 *   (a maker of db.js: createTestDatabase, useTestDatabase, useCliSuite, useServiceSuite,
 *   startTestService — called in the file, or through a helper of its own test folder whose
 *   function calls one, e.g. the IMAP tests' startPgServer or the API tests' useApi),
 *
 * except the files that reach the cluster on their own (they require ./citus: the router and
 * add-a-node tests, which `npm test` runs when MAILGATE_CITUS_URL is set). A file that makes no
 * test database (parsers, the in-memory IMAP service, its own embedded PostgreSQL) has nothing
 * to run differently on Citus. Behaviour only a single PostgreSQL has is skipped inside the
 * selected files, by singlePostgresOnly (./skip.js), with the reason printed.
 *
 * Must never: select by file name lists, or touch a database.
 */

const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..', '..');
/** The packages whose database tests run on the cluster. */
const PACKAGES = ['store', 'service', 'imap', 'api'];
/** db.js's functions that make a test database. */
const MAKERS = [
  'createTestDatabase',
  'useTestDatabase',
  'useCliSuite',
  'useServiceSuite',
  'startTestService',
];

const REQUIRE = /(?:const|let)\s*\{([^}]*)\}\s*=\s*require\(\s*'([^']+)'\s*\)/g;

/** Names a source takes by destructuring require('<spec>'), per spec. */
function imports(src) {
  const out = [];
  for (const m of src.matchAll(REQUIRE)) {
    const names = m[1]
      .split(',')
      .map((n) => n.split(':')[0].trim())
      .filter(Boolean);
    out.push({ spec: m[2], names });
  }
  return out;
}

/** Top-level functions of a helper module and their bodies (up to the next top-level one). */
function functions(src) {
  const out = new Map();
  const re = /^(?:async\s+)?function\s+(\w+)\s*\(/gm;
  const starts = [...src.matchAll(re)];
  starts.forEach((m, i) => {
    const end = i + 1 < starts.length ? starts[i + 1].index : src.length;
    out.set(m[1], src.slice(m.index, end));
  });
  return out;
}

/**
 * The functions of a test folder's helper module that make a test database (directly, or
 * through another maker of the same module or of db.js), found to a fixed point.
 */
function helperMakers(file) {
  const src = fs.readFileSync(file, 'utf8');
  const makers = new Set();
  for (const { spec, names } of imports(src)) {
    if (spec === '@mailgate/test-support/db')
      names.filter((n) => MAKERS.includes(n)).forEach((n) => makers.add(n));
  }
  const fns = functions(src);
  const found = new Set();
  for (let grew = true; grew;) {
    grew = false;
    for (const [name, body] of fns) {
      if (found.has(name)) continue;
      if ([...makers, ...found].some((n) => new RegExp(`\\b${n}\\s*\\(`).test(body))) {
        found.add(name);
        grew = true;
      }
    }
  }
  return found;
}

/** Whether a test file makes a test database (the rule above). */
function makesTestDatabase(file) {
  const src = fs.readFileSync(file, 'utf8');
  for (const { spec, names } of imports(src)) {
    if (spec === '@mailgate/test-support/db' && names.some((n) => MAKERS.includes(n))) {
      return true;
    }
    if (spec.startsWith('./')) {
      const helper = require.resolve(path.resolve(path.dirname(file), spec));
      const makers = helperMakers(helper);
      if (names.some((n) => makers.has(n))) return true;
    }
  }
  return false;
}

/** Whether a test file connects to the cluster by itself (requires test-support's citus.js). */
function usesClusterItself(file) {
  return /require\('@mailgate\/test-support\/citus'\)/.test(fs.readFileSync(file, 'utf8'));
}

/**
 * The test files of the Citus variant, absolute paths, sorted.
 * @returns {string[]}
 */
function citusTestFiles() {
  const out = [];
  for (const pkg of PACKAGES) {
    const dir = path.join(ROOT, 'packages', pkg, 'test');
    for (const name of fs.readdirSync(dir).sort()) {
      if (!name.endsWith('.test.js')) continue;
      const file = path.join(dir, name);
      if (makesTestDatabase(file) && !usesClusterItself(file)) out.push(file);
    }
  }
  return out;
}

module.exports = { citusTestFiles, makesTestDatabase, PACKAGES, MAKERS };
