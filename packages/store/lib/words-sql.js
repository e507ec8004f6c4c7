'use strict';

/*
 * How a word or phrase term of a search reads the tsvector, which lives in `message_words`
 * (same key as messages; migrations/20261125190000_message_words.js). Passed to
 * @mailgate/query compileSql as its `words` option: the query package knows the query
 * language, the store knows where the words are.
 */

const QUALIFIED_IDENT_RE = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/;

/**
 * The `words` option of compileSql for one user's search.
 * @param {number} userId the owner, bound: the subquery is then uncorrelated, answered once
 *   from the GIN index (a semi-join at the root of a WHERE, a hashed set under OR or NOT)
 *   instead of once per row
 * @param {string} [mailboxColumn] a column the surrounding query equates with the message's
 *   mailbox (`b.id`): a term every hit must meet is then looked up in that one mailbox first
 * @param {{alone?: {answered: boolean}}} [opts] alone: for a query that is this one term and
 *   nothing else (the caller checks: the hook returns a whole `SELECT uid` over the side
 *   table, which is no condition and cannot stand under AND, OR or NOT); needs mailboxColumn;
 *   sets `alone.answered` (scan-ops search uses it while the mailbox holds no hidden row)
 * @returns {(t: {alias: string, tsquery: () => string, bind: (v: any) => string, top: boolean}) => string}
 */
function wordsIn(userId, mailboxColumn, opts = {}) {
  const owner = checkedOwner('wordsIn', userId, mailboxColumn, opts.alone);
  return ({ alias, tsquery, bind, top }) => {
    // Placeholders are positional: the owner's comes first in the text, so it is bound first.
    const u = bind(owner);
    if (opts.alone) {
      opts.alone.answered = true;
      return (
        `SELECT w.uid FROM message_words w WHERE w.user_id = ${u} ` +
        `AND w.mailbox_id = ${mailboxColumn} AND w.tsv @@ ${tsquery()}`
      );
    }
    if (top && mailboxColumn) {
      // The uids first (an InitPlan over the GIN index, once per mailbox), then messages probed
      // by primary key. With the IN form below the planner joins the whole partition instead
      // (Enron large, `would`: 20 ms against 9 ms warm). Not under OR/NOT: there
      // `uid = ANY(array)` would scan the array for every row.
      return (
        `${alias}.uid = ANY(ARRAY(SELECT w.uid FROM message_words w WHERE w.user_id = ${u} ` +
        `AND w.mailbox_id = ${mailboxColumn} AND w.tsv @@ ${tsquery()}))`
      );
    }
    return (
      `(${alias}.mailbox_id, ${alias}.uid) IN (SELECT w.mailbox_id, w.uid FROM message_words w ` +
      `WHERE w.user_id = ${u} AND w.tsv @@ ${tsquery()})`
    );
  };
}

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

module.exports = { wordsIn, checkedOwner };
