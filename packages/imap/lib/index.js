'use strict';

/**
 * @mailgate/imap — mailgate's IMAP4rev1 server (RFC 3501 with IDLE, UIDPLUS, MOVE, CONDSTORE,
 * QRESYNC, SPECIAL-USE, LITERAL+, NAMESPACE, ID, ENABLE, UNSELECT) on the mail service.
 * See README.md.
 */

const { ImapServer, createImapServer, DEFAULTS } = require('./server');
const { CommandFramer } = require('./protocol/framer');
const { parseCommand, ParseError } = require('./protocol/parser');
const { describe } = require('@mailgate/mime/structure');

module.exports = {
  ImapServer,
  createImapServer,
  DEFAULTS,
  CommandFramer,
  parseCommand,
  ParseError,
  describeMessage: describe,
};
