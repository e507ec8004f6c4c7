'use strict';

/**
 * The one form of a mailbox name that every door stores and looks up: INBOX in any case is
 * INBOX (RFC 3501 5.1: the name is case-insensitive), and so is the first level of its
 * inferiors (`inbox/x` is `INBOX/x`, as IMAP LIST shows them). Every other name is
 * case-sensitive and kept as given. Here, at the bottom, so that the store, the IMAP server's
 * arguments, the importer and the mirror all apply the same rule. Without it an MH tree's
 * `inbox` folder (nmh's default) became a mailbox of its own that IMAP could not select.
 * @param {string} name
 * @returns {string}
 */
function canonicalMailboxName(name) {
  return String(name).replace(/^inbox(?=\/|$)/i, 'INBOX');
}

module.exports = { canonicalMailboxName };
