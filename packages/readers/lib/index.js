'use strict';

/**
 * @mailgate/readers — pure, streaming readers for legacy mail stores (mbox variants, Maildir /
 * Maildir++, MH) plus the inverse helpers needed for byte-exact export. See README.md.
 */

const { MboxSplitter } = require('./mbox-splitter');
const {
  escapeMessage,
  unescapeMessage,
  formatMboxEntry,
  exportEntry,
  VARIANTS,
} = require('./escape');
const { makeFromLine, isFromLine, fromLineDate } = require('./from-line');
const {
  readMaildir,
  parseMaildirInfo,
  formatMaildirName,
  hasInfoLetter,
  findMaildirs,
} = require('./maildir');
const { readMh } = require('./mh');
const { flagsFromHeaders, headerBlock, splitFlags, SYSTEM_FLAGS } = require('./flags');

module.exports = {
  MboxSplitter,
  escapeMessage,
  unescapeMessage,
  formatMboxEntry,
  makeFromLine,
  exportEntry,
  isFromLine,
  fromLineDate,
  readMaildir,
  parseMaildirInfo,
  formatMaildirName,
  hasInfoLetter,
  findMaildirs,
  readMh,
  flagsFromHeaders,
  headerBlock,
  splitFlags,
  SYSTEM_FLAGS,
  VARIANTS,
};
