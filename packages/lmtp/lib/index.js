'use strict';

/**
 * @mailgate/lmtp — mailgate's LMTP server (RFC 2033): an MTA (Postfix, Exim) hands it mail for
 * mailgate users, which it stores through the mail service's delivery operations. README.md
 * describes the replies, limits and configuration.
 */

const { LmtpServer, DEFAULTS } = require('./server');

/**
 * Creates an LMTP server (not listening yet: call `listen`).
 * @param {ConstructorParameters<typeof LmtpServer>[0]} opts
 * @returns {LmtpServer}
 */
function createLmtpServer(opts) {
  return new LmtpServer(opts);
}

module.exports = { createLmtpServer, LmtpServer, DEFAULTS };
