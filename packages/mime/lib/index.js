'use strict';

const { MessageParseError } = require('./errors');
const { parseMessage } = require('./parse');
const { decodeHeaderValue, parseAddressList } = require('./header');
const { buildView, getAttachment, sanitizeHtml } = require('./display');
const {
  renderMessage,
  parseMessageBounded,
  closeRequestPool,
  requestLimits,
} = require('./request');
const { htmlToText } = require('./body');
const { BoundedPool } = require('./bounded-pool');

module.exports = {
  parseMessage,
  // the earlier name of renderMessage, still used by @mailgate/service
  parseForDisplay: renderMessage,
  MessageParseError,
  decodeHeaderValue,
  parseAddressList,
  renderMessage,
  parseMessageBounded,
  closeRequestPool,
  requestLimits,
  buildView,
  getAttachment,
  sanitizeHtml,
  htmlToText,
  BoundedPool,
};
