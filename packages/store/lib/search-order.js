'use strict';

/*
 * Orders search hits for webmail (issue 14): by date, uid, sender, subject or size, ties
 * broken by mailbox and uid so the order is total (a cursor can resume after any row). The
 * hits come from any search path (SQL or Elasticsearch); this only sorts them, by the stored
 * columns. Never filters: expunged rows are dropped only because they are not shown anyway.
 */

const { SORT_DATE } = require('./list-cache');

/** Sort keys a search can be ordered by, as SQL on alias `m`. */
const SORT_KEYS = Object.freeze({
  uid: 'm.uid',
  // The header scan's date (list-cache.js SORT_DATE): the Date header, else the received
  // (internal) date, so a search lists its hits in the order the mailbox does (issue 30.11).
  date: SORT_DATE,
  size: 'm.size',
  // A person sorts by the name they see, case-insensitively.
  from: "lower(coalesce(nullif(m.from_name, ''), m.from_addr, ''))",
  // RFC 5256 base subject, simplified: reply/forward prefixes do not count. ({0,1}, not ?:
  // knex reads ? as a binding.)
  subject:
    "regexp_replace(lower(coalesce(m.subject, '')), '^((re|fwd{0,1}|aw|sv)(\\[\\d+\\]){0,1}\\s*:\\s*)+', '')",
});

/**
 * The hits in the order asked for.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {Array<{mailboxId: number, uid: number}>} hits
 * @param {{sort: 'uid'|'date'|'size'|'from'|'subject', desc?: boolean}} opts
 * @returns {Promise<Array<{mailboxId: number, uid: number}>>}
 */
async function orderHits(store, userId, hits, opts) {
  const key = SORT_KEYS[opts.sort];
  if (!key) throw new TypeError(`orderHits: unknown sort ${opts.sort}`);
  if (!hits.length) return [];
  const dir = opts.desc ? 'DESC' : 'ASC';
  const r = await store.knex.raw(
    `SELECT m.mailbox_id, m.uid FROM messages m
       JOIN unnest(?::int[], ?::bigint[]) AS h(mailbox_id, uid)
         ON m.mailbox_id = h.mailbox_id AND m.uid = h.uid
      WHERE m.user_id = ? AND NOT m.expunged
      ORDER BY ${key} ${dir} NULLS LAST, m.mailbox_id ${dir}, m.uid ${dir}`,
    [hits.map((h) => h.mailboxId), hits.map((h) => h.uid), userId],
  );
  return r.rows.map((x) => ({ mailboxId: x.mailbox_id, uid: Number(x.uid) }));
}

module.exports = { orderHits, SORT_KEYS };
