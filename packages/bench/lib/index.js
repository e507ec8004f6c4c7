'use strict';

/**
 * @mailgate/bench — the 2003 database-vs-flat-file study reproduced (`mailgate bench`).
 * See README.md.
 */

const mailboxes = require('./mailboxes');
const { selectQueries } = require('./select');
const { messageKey } = require('./keys');
const backends = require('./backends');
const harness = require('./harness');
const { runBench, REQUESTS } = require('./runner');
const report = require('./report');
const targets = require('./targets');
const { machineFacts } = require('./machine');
const { addBenchCommand } = require('./cli');
const { RawImapClient } = require('./raw-imap');
const { dovecotServer } = require('./dovecot-server');
const { mailgateImapServer } = require('./mailgate-imap-server');

module.exports = {
  ...mailboxes,
  selectQueries,
  messageKey,
  ...backends,
  ...harness,
  runBench,
  REQUESTS,
  ...report,
  ...targets,
  machineFacts,
  addBenchCommand,
  RawImapClient,
  dovecotServer,
  mailgateImapServer,
};
