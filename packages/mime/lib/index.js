'use strict';

const { MessageParseError } = require('./errors');
const { parseMessage } = require('./parse');
const { decodeHeaderValue, parseAddressList } = require('./header');
const { parseForDisplay, getAttachment, sanitizeHtml } = require('./display');
const { htmlToText } = require('./body');
const { BoundedPool } = require('./bounded-pool');

module.exports = {
  parseMessage,
  MessageParseError,
  decodeHeaderValue,
  parseAddressList,
  parseForDisplay,
  getAttachment,
  sanitizeHtml,
  htmlToText,
  BoundedPool,
};
