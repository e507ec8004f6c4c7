'use strict';

const { errors } = require('@mailgate/core');
const { parse, validate, mailboxesIn } = require('@mailgate/query');

/*
 * What every backend shares around its own answers: opaque cursors, scan order options and
 * the query checks that must not depend on the backend (an `in:` of a mailbox that does not
 * exist is a coded error everywhere, never 0 hits).
 */

/**
 * @param {object} pos keyset position ({uid, date}) or search offset ({offset})
 * @returns {string}
 */
function encodeCursor(pos) {
  return Buffer.from(JSON.stringify(pos)).toString('base64url');
}

/**
 * @param {string|null|undefined} cursor
 * @returns {object|null}
 */
function decodeCursor(cursor) {
  if (cursor == null || cursor === '') return null;
  try {
    const pos = JSON.parse(Buffer.from(String(cursor), 'base64url').toString('utf8'));
    if (pos && typeof pos === 'object') return pos;
  } catch {
    // falls through to the coded error
  }
  throw new errors.INVALID_CURSOR(String(cursor).slice(0, 40));
}

/**
 * Normalised scan options: `order` asc|desc, `sort` uid|date (`order: '-date'` style accepted).
 * @param {{order?: string, sort?: string}} [opts]
 * @returns {{desc: boolean, sort: 'uid'|'date'}}
 */
function scanOrder(opts = {}) {
  let order = opts.order || 'asc';
  let sort = opts.sort || 'uid';
  if (order === 'uid' || order === 'date' || order === '-uid' || order === '-date') {
    sort = order.replace('-', '');
    order = order.startsWith('-') ? 'desc' : 'asc';
  }
  if (!['asc', 'desc'].includes(order) || !['uid', 'date'].includes(sort)) {
    throw new errors.INVALID_INPUT(`invalid scan order ${opts.order} / sort ${opts.sort}`);
  }
  return { desc: order === 'desc', sort };
}

/**
 * Query text or AST → validated AST (QueryError is the catalogue's INVALID_QUERY, 400).
 * @param {string|object} query
 */
function toAst(query) {
  if (query && typeof query === 'object') return validate(query);
  return parse(query == null ? '' : String(query));
}

/**
 * Fails with INVALID_QUERY (400) when the query names a mailbox the user does not have: a
 * typo in `in:` must not look like "no mail".
 * @param {object} ast
 * @param {() => Promise<string[]>} names the user's mailbox names
 */
async function checkMailboxes(ast, names) {
  const wanted = mailboxesIn(ast);
  if (!wanted.size) return;
  const have = new Set(await names());
  for (const w of wanted) {
    if (!have.has(w)) throw new errors.INVALID_QUERY(`Invalid query: no mailbox '${w}' for 'in:'`);
  }
}

/**
 * The interface's mailbox row from a store or legacy listing (`highestmodseq` → camel case).
 * @param {object} b
 * @param {boolean|null} subscribed
 */
function mailboxRow(b, subscribed) {
  return {
    name: b.name,
    total: b.total,
    unseen: b.unseen,
    uidvalidity: b.uidvalidity,
    uidnext: b.uidnext,
    highestModseq: b.highestmodseq,
    specialUse: b.specialUse,
    subscribed,
  };
}

/**
 * Groups hits `[{mailbox, uid}]` per mailbox in first-seen order (the search answer's shape).
 * @param {Array<{mailbox: string, uid: number}>} hits
 */
function perMailbox(hits) {
  const per = new Map();
  for (const h of hits) {
    if (!per.has(h.mailbox)) per.set(h.mailbox, []);
    per.get(h.mailbox).push(h.uid);
  }
  return [...per].map(([mailbox, uids]) => ({ mailbox, uids }));
}

/** Search orders: `asc`/`desc` (mailbox, then uid) or a sort key, `-` first for descending. */
const SEARCH_SORTS = Object.freeze(['date', 'uid', 'from', 'subject', 'size']);

/**
 * A search's `order` as {sort, desc}; sort null for the plain mailbox-then-uid order.
 * @param {string} [order] asc | desc | date | -date | uid | -uid | from | -from | subject | -subject | size | -size
 * @returns {{sort: string|null, desc: boolean}}
 */
function searchOrder(order) {
  if (order == null || order === '' || order === 'asc') return { sort: null, desc: false };
  if (order === 'desc') return { sort: null, desc: true };
  const desc = order.startsWith('-');
  const sort = desc ? order.slice(1) : order;
  if (!SEARCH_SORTS.includes(sort)) {
    throw new errors.INVALID_INPUT(
      `order must be one of ${SEARCH_SORTS.join(', ')} (prefix - for descending), asc or desc`,
    );
  }
  return { sort, desc };
}

/**
 * One page of ordered hits. The cursor names the last hit shown (mailbox and uid) and its
 * position: the next page starts right after that hit even when hits before it came or went
 * in the meantime; only if that very hit is gone does the position decide.
 * @param {Array<{mailbox: string, uid: number}>} hits in the order to page (see searchOrder)
 * @param {{order?: string, cursor?: string, limit?: number}} opts
 */
function pageHits(hits, opts) {
  const ordered = opts.order === 'desc' ? [...hits].reverse() : hits;
  const at = decodeCursor(opts.cursor);
  let start = 0;
  if (at) {
    const i =
      at.m !== undefined ? ordered.findIndex((h) => h.mailbox === at.m && h.uid === at.u) : -1;
    start = i >= 0 ? i + 1 : Number(at.offset ?? at.n) | 0;
  }
  const limit = opts.limit == null ? 50 : opts.limit;
  const page = ordered.slice(start, start + limit);
  const more = limit > 0 && start + limit < ordered.length;
  const last = page[page.length - 1];
  return {
    ordered,
    page,
    nextCursor: more ? encodeCursor({ m: last.mailbox, u: last.uid, n: start + limit }) : null,
  };
}

module.exports = {
  mailboxRow,
  encodeCursor,
  decodeCursor,
  scanOrder,
  toAst,
  checkMailboxes,
  perMailbox,
  pageHits,
  searchOrder,
  SEARCH_SORTS,
};
