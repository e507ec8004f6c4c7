'use strict';

/**
 * @mailgate/store — the PostgreSQL store and mailgate's data model: schema (with migrations/),
 * the header row (header-row.js), the flag/keyword split (re-exported from @mailgate/readers),
 * modseq bumping and es_outbox rows. The only package that writes SQL. See README.md.
 */

const { PgStore } = require('./pg-store');
const headerRow = require('./header-row');
const { splitFlags, SYSTEM_FLAGS } = require('@mailgate/readers');
const { hashToken } = require('./tokens');
const { threadIds, baseSubject } = require('./thread-ops');
const { HealthProbe } = require('./health-probe');
const { byName } = require('./mailbox-ref');
const { openDatabase, MIGRATIONS_DIR } = require('./db');
const { EmbeddedPostgres } = require('./embedded-pg');

/**
 * Adds each concern's methods to PgStore, refusing a name that is already there: two concerns
 * once both defined `listUsers` and the later one silently replaced the other (es verify then
 * searched ES for user `undefined`). Throws at load time, so any test catches a new collision.
 * @param {object} target
 * @param {...object} sources
 */
function mixIn(target, ...sources) {
  for (const source of sources) {
    for (const name of Object.keys(source)) {
      if (name in target) throw new Error(`store: method ${name} is defined twice`);
      target[name] = source[name];
    }
  }
  return target;
}

mixIn(
  PgStore.prototype,
  require('./mail-ops').mailOps,
  require('./mailbox-ops').mailboxOps,
  require('./append-ops').appendOps,
  require('./thread-ops').threadOps,
  require('./fleet-ops').fleetOps,
  require('./login-ops').loginOps,
);

module.exports = {
  PgStore,
  mixIn,
  ...headerRow,
  splitFlags,
  SYSTEM_FLAGS,
  hashToken,
  threadIds,
  baseSubject,
  HealthProbe,
  byName,
  openDatabase,
  MIGRATIONS_DIR,
  EmbeddedPostgres,
};
