'use strict';

/*
 * The checks every search-term hook (words-sql.js, chunks-sql.js) makes on its arguments
 * before any of them reaches SQL text. Owns no SQL.
 */

const QUALIFIED_IDENT_RE = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/;

/**
 * The checks every search-term hook makes on its arguments (the mailbox column reaches the SQL
 * text, so it must be an identifier).
 * @param {string} who the hook's name, for the error
 * @param {number} userId
 * @param {string} [mailboxColumn]
 * @param {object} [alone] the hook's `alone` option, which only works in one mailbox
 * @returns {number} the owner as an integer
 */
function checkedOwner(who, userId, mailboxColumn, alone) {
  const owner = Number(userId);
  if (!Number.isInteger(owner)) throw new TypeError(`${who}: integer user id required`);
  if (mailboxColumn !== undefined && !QUALIFIED_IDENT_RE.test(mailboxColumn)) {
    throw new TypeError(`${who}: invalid mailbox column ${JSON.stringify(mailboxColumn)}`);
  }
  if (alone && mailboxColumn === undefined) {
    throw new TypeError(`${who}: the alone option needs a mailbox column`);
  }
  return owner;
}

module.exports = { checkedOwner };
