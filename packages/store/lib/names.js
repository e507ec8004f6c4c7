'use strict';

const { errors, checkMailboxName } = require('@mailgate/core');
const { parse } = require('@mailgate/query');

/*
 * What the store accepts as a user name, a mailbox name and query text, and the special use a
 * mailbox name implies. A leaf below every store module (no store module required here), so
 * the concern modules share these rules without requiring pg-store.
 */

/**
 * Parses query text. @mailgate/query's QueryError already carries the catalogue's code
 * (INVALID_QUERY) and status (400), so the API and the CLI report it as a coded error as is.
 * @param {string} text
 */
function parseQuery(text) {
  return parse(text);
}

/**
 * Refuses a user name outside 1-128 letters, digits and `. _ @ + -` (USAGE).
 * @param {string} name
 */
function validateUserName(name) {
  if (typeof name !== 'string' || !/^[A-Za-z0-9._@+-]{1,128}$/.test(name)) {
    throw new errors.USAGE(
      `invalid user name "${name}": use 1-128 characters from letters, digits, . _ @ + -`,
    );
  }
}

/**
 * The one mailbox name rule (@mailgate/core mailbox-name.js), here too so that no import or
 * door that reaches the store without the service's check can create a name an export would
 * follow out of its folder.
 * @param {string} name
 */
function validateMailboxName(name) {
  checkMailboxName(name);
}

/**
 * RFC 6154 special-use attribute for the usual folder names found in legacy stores.
 * @param {string} name
 * @returns {string|null}
 */
function specialUseFor(name) {
  const n = name.toLowerCase().replace(/^inbox[./]/, '');
  const map = {
    sent: '\\Sent',
    'sent items': '\\Sent',
    'sent mail': '\\Sent',
    drafts: '\\Drafts',
    trash: '\\Trash',
    'deleted items': '\\Trash',
    junk: '\\Junk',
    spam: '\\Junk',
    archive: '\\Archive',
  };
  return map[n] || null;
}

module.exports = { parseQuery, validateUserName, validateMailboxName, specialUseFor };
