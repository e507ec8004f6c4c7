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
const { packRows: packImapRows } = require('./imap-meta-ops');
const { openDatabase, MIGRATIONS_DIR } = require('./db');
const { EmbeddedPostgres, socketDirOf } = require('./embedded-pg');

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
  packImapRows,
  openDatabase,
  MIGRATIONS_DIR,
  EmbeddedPostgres,
  socketDirOf,
};
