'use strict';

const { errors, canonicalMailboxName } = require('@mailgate/core');

/*
 * How a store query names a mailbox: by id (a number: what the store's own stages, the
 * importer and the purger hold) or by name (`byName(name)`: what the service holds, since the
 * API, IMAP and the CLI name mailboxes). A name is resolved by the query itself, on
 * (user_id, name) in the same statement: no round trip of its own, and no id that a rename or
 * delete in another session could make stale between two statements. Owns that SQL and the
 * MAILBOX_NOT_FOUND of a name the statement did not find. Never caches a name → id mapping
 * for addressing rows (a hint for choosing a path is the list cache's business).
 */

// The stored form of a mailbox name: @mailgate/core's one rule (INBOX in any case, and its
// first-level inferiors, are `INBOX…`).
const canonicalName = canonicalMailboxName;

// The SQL expression giving a new mailbox its UIDVALIDITY: the next value of a sequence that
// only grows for the life of the database, dumps and restores included (migration
// 20261127200000). Never the clock: two creations of one name within a second repeated it.
const NEW_UIDVALIDITY = "nextval('mailbox_uidvalidity_seq')";

/**
 * A mailbox reference by name (canonicalName).
 * @param {string} name
 * @returns {{name: string}}
 */
function byName(name) {
  return Object.freeze({ name: canonicalName(name) });
}

/** @param {unknown} ref */
function isName(ref) {
  return ref !== null && typeof ref === 'object' && typeof ref.name === 'string';
}

/**
 * The mailbox's WHERE on `mailboxes b` and its binding.
 * @param {number|{name: string}} ref
 */
function mailboxWhere(ref) {
  return isName(ref) ? { sql: 'b.name = ?', value: ref.name } : { sql: 'b.id = ?', value: ref };
}

/**
 * Runs `inner`, a SELECT over the mailbox `b.id` (`uid` non-null on every row), inside the
 * mailbox row's own read:
 *
 *   SELECT b.id AS mb_id, b.highestmodseq AS mb_modseq, b.uidvalidity AS mb_uidvalidity, x.*
 *     FROM mailboxes b LEFT JOIN LATERAL (inner) x ON true
 *    WHERE b.user_id = ? AND b.name = ?            -- or b.id = ?
 *
 * One statement, one snapshot: the mailbox the name denotes and its rows. A lateral subquery
 * with ORDER BY / LIMIT is not flattened: the plan is a nested loop under the one mailbox row,
 * so the inner order is the answer's order.
 * @param {{raw: Function}} db knex or a transaction
 * @param {number} userId
 * @param {number|{name: string}} ref
 * @param {string} inner
 * @param {any[]} bindings the inner query's
 * @param {string} [present] a column every inner row has non-null (`uid` by default)
 * @param {object|null} [queryOptions] node-postgres options of the statement (e.g. TEXT_TYPES)
 * @returns {Promise<{mailbox: {id: number, highestmodseq: number, uidvalidity: number, uidnext: number}|null,
 *   rows: object[]}>} mailbox null when there is none (MAILBOX_NOT_FOUND is the caller's
 *   choice: `mustExist`)
 */
async function inMailbox(db, userId, ref, inner, bindings, present = 'uid', queryOptions = null) {
  const q = mailboxQuery(db, userId, ref, inner, bindings);
  const r = await (queryOptions ? q.options(queryOptions) : q);
  if (!r.rows.length) return { mailbox: null, rows: [] };
  const first = r.rows[0];
  const mailbox = {
    id: Number(first.mb_id),
    highestmodseq: Number(first.mb_modseq),
    uidvalidity: Number(first.mb_uidvalidity),
    uidnext: Number(first.mb_uidnext),
  };
  const rows = first[present] === null || first[present] === undefined ? [] : r.rows;
  return { mailbox, rows };
}

/**
 * inMailbox's statement, not run: the mailbox's row (mb_id, mb_modseq, mb_uidvalidity,
 * mb_uidnext) beside each row of `inner`, or alone with nulls when `inner` has none; no row
 * when there is no such mailbox. For callers that read its rows otherwise (cursor.js
 * rowsAsSent).
 * @param {import('knex').Knex} db
 * @param {number} userId
 * @param {number|{name: string}} ref
 * @param {string} inner
 * @param {any[]} bindings the inner query's
 * @returns {import('knex').Knex.Raw}
 */
function mailboxQuery(db, userId, ref, inner, bindings) {
  const w = mailboxWhere(ref);
  return db.raw(
    `SELECT b.id AS mb_id, b.highestmodseq AS mb_modseq, b.uidvalidity AS mb_uidvalidity,
            b.uidnext AS mb_uidnext, x.*
       FROM mailboxes b LEFT JOIN LATERAL (${inner}) x ON true
      WHERE b.user_id = ? AND ${w.sql}`,
    [...bindings, userId, w.value],
  );
}

/**
 * MAILBOX_NOT_FOUND for a named mailbox the statement did not find. (A mailbox by id keeps
 * the store's older answers: an empty result.)
 * @param {number|{name: string}} ref
 * @param {object|null} mailbox
 */
function mustExist(ref, mailbox) {
  if (!mailbox && isName(ref)) throw new errors.MAILBOX_NOT_FOUND(ref.name);
}

module.exports = {
  byName,
  canonicalName,
  isName,
  mailboxWhere,
  inMailbox,
  mailboxQuery,
  mustExist,
  NEW_UIDVALIDITY,
};
