'use strict';

/*
 * The Citus variant of the suite (issue 34; `npm run test:citus` with DATABASE_URL at a Citus
 * coordinator, run by .ci/run after `npm test`): the test files that packages/test-support's
 * citus-suite.js selects by its rule — every store, service, IMAP and API test file that makes
 * a test database — with the settings of jest.config.js. Behaviour only a single PostgreSQL has
 * is skipped inside those files (test-support skip.js singlePostgresOnly), with the reason
 * printed. docs/scaling-out.md "The test suite on the cluster".
 */

const base = require('./jest.config');
const { citusTestFiles } = require('./packages/test-support/lib/citus-suite');

// Exact paths as regular expressions (testMatch globs would read brackets and dots).
const exact = (file) => `^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;

module.exports = {
  ...base,
  testMatch: undefined,
  testRegex: citusTestFiles().map(exact),
};
