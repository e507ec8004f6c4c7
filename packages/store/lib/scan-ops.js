'use strict';

const { errors } = require('@mailgate/core');
const { compileSql, mailboxesIn } = require('@mailgate/query');
const { HEADER_COLUMNS, LIST_COLUMNS, TEXT_TYPES, headerRow, listRow } = require('./header-row');
const { pageOf } = require('./list-cache');
const { inMailbox, mustExist, isName } = require('./mailbox-ref');
const { wordsIn } = require('./words-sql');
const { chunksIn } = require('./chunks-sql');
const { parseQuery } = require('./names');

/*
 * Scans and searches of a user's mail: the list view and header rows of a mailbox (served from
 * the store's list caches when it has them) and the query language compiled to SQL. Plain
 * functions taking the store first (PgStore's methods of the same names call them).
 * Reads only: never changes a row.
 */

/**
 * The list view of a mailbox (header-row.js listRowOf), every visible message in uid order:
 * what a client's message list needs, without recipients.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number|{name: string}} mailbox id, or byName(name)
 * @param {{known?: {id: number, uidvalidity: number, highestmodseq: number}}} [opts]
 *   known: the mailbox's row as the caller read it just now (list-cache.js rowsOf)
 * @returns {Promise<ReadonlyArray<object>>} frozen rows (shared: never change them)
 */
async function scanList(store, userId, mailbox, opts = {}) {
  if (store.listViewCache) {
    const list = await store.listViewCache.rowsOf(store.knex, userId, mailbox, opts.known);
    mustExist(mailbox, list);
    return list || [];
  }
  const { mailbox: mb, rows } = await inMailbox(
    store.knex,
    userId,
    mailbox,
    `SELECT ${LIST_COLUMNS} FROM messages m
      WHERE m.user_id = ? AND m.mailbox_id = b.id AND NOT m.expunged ORDER BY m.uid`,
    [userId],
    'uid',
    { types: TEXT_TYPES },
  );
  mustExist(mailbox, mb);
  return rows.map(listRow);
}

/**
 * Header rows of a mailbox, keyset-paged by uid.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number|{name: string}} mailbox id, or byName(name) (MAILBOX_NOT_FOUND when none)
 * @param {{limit?: number, afterUid?: number, order?: 'asc'|'desc'}} [opts]
 */
async function scanHeaders(store, userId, mailbox, opts = {}) {
  if (store.listCache) {
    const list = await store.listCache.rowsOf(store.knex, userId, mailbox);
    mustExist(mailbox, list);
    return list ? pageOf(list, opts) : [];
  }
  const order = opts.order === 'desc' ? 'DESC' : 'ASC';
  const cmp = order === 'DESC' ? '<' : '>';
  const bindings = [userId];
  let cursor = '';
  if (opts.afterUid != null) {
    cursor = `AND m.uid ${cmp} ?`;
    bindings.push(opts.afterUid);
  }
  let limit = '';
  if (opts.limit) {
    limit = 'LIMIT ?';
    bindings.push(opts.limit);
  }
  const { mailbox: mb, rows } = await inMailbox(
    store.knex,
    userId,
    mailbox,
    `SELECT ${HEADER_COLUMNS} FROM messages m
      WHERE m.user_id = ? AND m.mailbox_id = b.id AND NOT m.expunged ${cursor}
      ORDER BY m.uid ${order} ${limit}`,
    bindings,
  );
  mustExist(mailbox, mb);
  return rows.map(headerRow);
}

/**
 * Search with the query language (@mailgate/query).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {string|object} query query text or AST
 * @param {{mailboxId?: number, mailbox?: {name: string}, withNames?: boolean, limit?: number}} [opts]
 *   mailbox: byName(name), resolved by the search's own statement (MAILBOX_NOT_FOUND when
 *   none); hits then carry its name (`mailbox`), as they do with withNames (same statement)
 * @returns {Promise<{total: number, hits: Array<{mailboxId: number, uid: number, mailbox?: string}>}>}
 */
async function search(store, userId, query, opts = {}) {
  const ast = typeof query === 'string' ? parseQuery(query) : query;
  await store.checkQueryMailboxes(userId, ast);
  const scope = opts.mailbox != null ? opts.mailbox : opts.mailboxId;
  // In one mailbox (b.id below): word and text terms are looked up in it first.
  const where = compileSql(ast, {
    alias: 'm',
    userId,
    words: wordsIn(userId, scope != null ? 'b.id' : undefined),
    substring: chunksIn(userId, scope != null ? 'b.id' : undefined),
  });
  let rows;
  if (scope != null) {
    let inner = `SELECT m.uid FROM messages m
        WHERE m.user_id = ? AND m.mailbox_id = b.id AND NOT m.expunged AND (${where.sql})`;
    let bindings = [userId, ...where.bindings];
    const alone = aloneSql(userId, ast);
    if (alone) {
      // While the mailbox holds no hidden (expunged, not yet purged) row, the side table's
      // uids are its live messages: the term's uids are the answer, without probing a
      // messages row per hit (migrations/20261126000000_expunged_pending.js). One statement,
      // one snapshot: the count and the rows agree. Each branch's condition on b is a
      // one-time filter, so only one branch runs.
      inner = `${inner} AND b.expunged_pending > 0
        UNION ALL SELECT a.uid FROM (${alone.sql}) a WHERE b.expunged_pending = 0`;
      bindings = [...bindings, ...alone.bindings];
    }
    const found = await inMailbox(store.knex, userId, scope, `${inner} ORDER BY uid`, bindings);
    mustExist(scope, found.mailbox);
    rows = found.rows.map((x) => ({ mailbox_id: x.mb_id, uid: x.uid }));
    if (isName(scope)) for (const x of rows) x.name = scope.name;
  } else if (opts.withNames) {
    const r = await store.knex.raw(
      `SELECT m.mailbox_id, b.name, m.uid FROM messages m
         JOIN mailboxes b ON b.user_id = m.user_id AND b.id = m.mailbox_id
        WHERE m.user_id = ? AND NOT m.expunged AND (${where.sql})
        ORDER BY m.mailbox_id, m.uid`,
      [userId, ...where.bindings],
    );
    rows = r.rows;
  } else {
    const r = await store.knex.raw(
      `SELECT m.mailbox_id, m.uid FROM messages m
        WHERE m.user_id = ? AND NOT m.expunged AND (${where.sql})
        ORDER BY m.mailbox_id, m.uid`,
      [userId, ...where.bindings],
    );
    rows = r.rows;
  }
  const hits = rows.map((x) => {
    const h = { mailboxId: Number(x.mailbox_id), uid: Number(x.uid) };
    if (x.name != null) h.mailbox = x.name;
    return h;
  });
  return { total: hits.length, hits: opts.limit ? hits.slice(0, opts.limit) : hits };
}

/**
 * INVALID_QUERY (400) when the query's `in:` names a mailbox the user does not have: a typo
 * must not read as "no mail" (issue 11).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {object} ast
 */
async function checkQueryMailboxes(store, userId, ast) {
  const wanted = [...mailboxesIn(ast)];
  if (!wanted.length) return;
  const found = await store
    .knex('mailboxes')
    .where({ user_id: userId })
    .whereIn('name', wanted)
    .pluck('name');
  const missing = wanted.filter((w) => !found.includes(w));
  if (missing.length) {
    throw new errors.INVALID_QUERY(`Invalid query: no mailbox '${missing[0]}' for 'in:'`);
  }
}

/**
 * A query that is one word, phrase or substring term the side tables answer alone, compiled to
 * its bare `SELECT uid` in the mailbox `b` (wordsIn/chunksIn `alone`); null for any other.
 * @param {number} userId
 * @param {object} ast
 * @returns {{sql: string, bindings: any[]}|null}
 */
function aloneSql(userId, ast) {
  if (!['word', 'phrase', 'substring'].includes(ast.type)) return null;
  const alone = { answered: false };
  const c = compileSql(ast, {
    alias: 'm',
    userId,
    words: wordsIn(userId, 'b.id', { alone }),
    substring: chunksIn(userId, 'b.id', { alone }),
  });
  return alone.answered ? c : null;
}

module.exports = {
  scanList,
  scanHeaders,
  search,
  checkQueryMailboxes,
};
