'use strict';

const { runImport } = require('./import');
const { deriveRow, imapMetaOf } = require('./derive');
const { mailboxForMboxFile } = require('./sources');
const { exportMbox, exportMh, exportMaildir, checkExportTarget } = require('./export');
const { verifySource } = require('./verify');
const { listQuarantine, quarantineRaw } = require('./quarantine');
const { verifyImap } = require('./imap-verify');
const { migrateAccount } = require('./migrate');
const { wantedFolder } = require('./imap-source');
const { backfillImapMeta } = require('./backfill');

module.exports = {
  runImport,
  deriveRow,
  imapMetaOf,
  mailboxForMboxFile,
  exportMbox,
  exportMh,
  exportMaildir,
  checkExportTarget,
  verifySource,
  listQuarantine,
  quarantineRaw,
  verifyImap,
  migrateAccount,
  // An accounts file's folder filter (service fleet.js: the upstream survey).
  wantedFolder,
  backfillImapMeta,
};
