'use strict';

const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..', '..');

/** On CI (CI set and not `false`) every tool a test needs must be there: a missing one fails. */
const inCI = Boolean(process.env.CI) && process.env.CI !== 'false';

const label = (file, part) => `${path.relative(ROOT, file)}${part ? ` › ${part}` : ''}`;

/**
 * The one line a test file prints when it (or a part of it) is skipped outside CI:
 * `skipping <file relative to the repo>[ › <part>]: <reason>`, so that a run shows what did not
 * run and why (test/skip-notices.test.js checks every skipping file calls this).
 * @param {string} file the test file (__filename)
 * @param {string} reason what is missing, and how to get it
 * @param {string} [part] the skipped part, when not the whole file
 */
function skipNotice(file, reason, part) {
  console.log(`skipping ${label(file, part)}: ${reason}`);
}

/**
 * The rule for a test file (or part) that needs what a machine may lack: with a reason, in CI
 * the file fails at once (`<file>[ › <part>] must run in CI: <reason>`), elsewhere it prints
 * its skipNotice line and the caller skips.
 * @param {string} file the test file (__filename)
 * @param {string|null} reason what is missing; null when nothing is
 * @param {string} [part] the part that needs it, when not the whole file
 * @returns {string|null} the reason (null: run)
 */
function skipOutsideCI(file, reason, part) {
  if (!reason) return null;
  if (inCI) throw new Error(`${label(file, part)} must run in CI: ${reason}`);
  skipNotice(file, reason, part);
  return reason;
}

/** Whether this run's test databases are on a Citus coordinator (the Citus variant). */
function onCitus() {
  return Boolean(process.env.MAILGATE_TEST_CITUS_BASE);
}

/**
 * The one rule for leaving behaviour out of the Citus variant of the suite (jest.citus.config.js,
 * docs/scaling-out.md): a test of what only a single PostgreSQL has — per-user LIST partitions
 * and their statistics or indexes, a server the test restarts or signals itself — is skipped on
 * a Citus coordinator, with its skipNotice line (`single PostgreSQL only: <reason>`); everywhere
 * else it runs. Nothing else may be skipped there.
 * @param {string} file the test file (__filename)
 * @param {string} reason what the test relies on that Citus does not have
 * @param {string} [part] the test or block, when not the whole file
 * @returns {boolean} true: skip it (the run's database is a Citus coordinator)
 */
function singlePostgresOnly(file, reason, part) {
  if (!onCitus()) return false;
  skipNotice(file, `single PostgreSQL only: ${reason}`, part);
  return true;
}

/** Why a real Dovecot of @mailgate/dovecot cannot run here (null when it can). */
function dovecotMissing() {
  if (!require('@mailgate/dovecot').installed()) {
    return 'dovecot is not installed (bash scripts/dovecot/install.sh)';
  }
  if (process.getuid && process.getuid() !== 0) return 'dovecot instances need root';
  return null;
}

module.exports = {
  skipNotice,
  skipOutsideCI,
  singlePostgresOnly,
  onCitus,
  dovecotMissing,
  inCI,
};
