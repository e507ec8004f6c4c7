'use strict';

const { errors } = require('./errors');

/*
 * The rules every door applies to a mailbox name: its one canonical form (canonicalMailboxName)
 * and what a name may never be (checkMailboxName). Here, at the bottom, so that the store, the
 * service, the IMAP server's arguments, the importer and the exporters all apply the same rule.
 * Never touches the store or files.
 */

/** Longest name accepted (bytes of UTF-16 are not counted apart: a name is a short label). */
const MAILBOX_NAME_MAX_LENGTH = 512;

// C0 controls, DEL and C1 controls: invisible in a listing, and NUL/CR/LF break protocols.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * The one form of a mailbox name that every door stores and looks up: INBOX in any case is
 * INBOX (RFC 3501 5.1: the name is case-insensitive), and so is the first level of its
 * inferiors (`inbox/x` is `INBOX/x`, as IMAP LIST shows them). Every other name is
 * case-sensitive and kept as given. Without it an MH tree's `inbox` folder (nmh's default)
 * became a mailbox of its own that IMAP could not select.
 * @param {string} name
 * @returns {string}
 */
function canonicalMailboxName(name) {
  return String(name).replace(/^inbox(?=\/|$)/i, 'INBOX');
}

/**
 * Why a mailbox name is refused, or null when it is acceptable. A name is a `/`-separated
 * path that exporters turn into folders (MH `a/b`, Maildir++ `.a.b`): a `.` or `..` segment
 * would write outside the export's folder (issue 29.6), and control characters break
 * protocols and listings.
 * @param {unknown} name
 * @returns {string|null}
 */
function mailboxNameProblem(name) {
  if (typeof name !== 'string' || name === '') return 'it is empty';
  if (name.length > MAILBOX_NAME_MAX_LENGTH) {
    return `it is longer than ${MAILBOX_NAME_MAX_LENGTH} characters`;
  }
  if (CONTROL.test(name)) return 'it contains a control character';
  if (name.split('/').some((seg) => seg === '.' || seg === '..')) {
    return 'a "." or ".." path segment is not allowed';
  }
  return null;
}

/**
 * Throws INVALID_MAILBOX_NAME unless the name is acceptable (mailboxNameProblem); returns it.
 * @param {string} name
 * @returns {string}
 */
function checkMailboxName(name) {
  const problem = mailboxNameProblem(name);
  if (problem) throw new errors.INVALID_MAILBOX_NAME(printable(name), problem);
  return name;
}

/** The name as it may be shown: control characters as \uXXXX, cut to a readable length. */
function printable(name) {
  const s = String(name).replace(
    new RegExp(CONTROL.source, 'g'),
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return s.length > 80 ? `${s.slice(0, 80)}…` : s;
}

module.exports = {
  canonicalMailboxName,
  checkMailboxName,
  mailboxNameProblem,
  MAILBOX_NAME_MAX_LENGTH,
};
