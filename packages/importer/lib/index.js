'use strict';

const { runImport } = require('./import');
const { deriveRow } = require('./derive');
const { fromLineDate, mailboxForMboxFile } = require('./sources');
const { exportMbox, exportMh, exportMaildir } = require('./export');
const { verifySource } = require('./verify');
const { listQuarantine } = require('./quarantine');

module.exports = {
  runImport,
  deriveRow,
  fromLineDate,
  mailboxForMboxFile,
  exportMbox,
  exportMh,
  exportMaildir,
  verifySource,
  listQuarantine,
};
