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

Object.assign(
  PgStore.prototype,
  require('./mail-ops').mailOps,
  require('./mailbox-ops').mailboxOps,
  require('./mirror-ops').mirrorOps,
  require('./tokens').tokenOps,
  require('./import-ops').importOps,
  require('./search-order').searchOrderOps,
  require('./imap-meta-ops').imapMetaOps,
  require('./thread-ops').threadOps,
  require('./route-ops').routeOps,
  require('./user-ops').userOps,
);

module.exports = {
  PgStore,
  ...headerRow,
  splitFlags,
  SYSTEM_FLAGS,
  hashToken,
  threadIds,
  baseSubject,
  HealthProbe,
  byName,
};
