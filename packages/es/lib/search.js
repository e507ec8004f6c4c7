'use strict';

const { parse } = require('@mailgate/query');
const { compileEs } = require('./compile');
const { namesFor } = require('./mapping');
const { textValues } = require('./words');
const { isNotFound, unavailable } = require('./indices');
const { storeOf } = require('./store-of');

const PAGE = 10000;

// QueryError carries the catalogue's INVALID_QUERY code and 400 status (see @mailgate/query).
const parseQuery = parse;

/**
 * Search through Elasticsearch with the same result shape as PgStore#search. The query only
 * opens the user's own index (alias) and also filters on user_id; the hits are then resolved
 * against PostgreSQL, so a document whose expunge is still queued in the outbox is not
 * returned, and uids are PostgreSQL's.
 * @param {{store: import('@mailgate/store').PgStore, client: import('@elastic/elasticsearch').Client, prefix: string}} ctx
 * @param {number} userId
 * @param {string|object} query text or AST
 * @param {{mailboxId?: number, limit?: number}} [opts]
 * @returns {Promise<{total: number, hits: Array<{mailboxId: number, uid: number}>, esMs: number}>}
 */
async function searchEs(ctx, userId, query, opts = {}) {
  const ast = typeof query === 'string' ? parseQuery(query) : query;
  const lexemes = await storeOf(ctx).queryLexemes(textValues(ast));
  const filter = [{ term: { user_id: userId } }, compileEs(ast, { lexemes })];
  if (opts.mailboxId != null) filter.push({ term: { mailbox_id: opts.mailboxId } });
  const t0 = process.hrtime.bigint();
  const found = [];
  let after;
  try {
    for (;;) {
      const res = await ctx.client.search({
        index: namesFor(ctx.prefix, userId).alias,
        size: PAGE,
        _source: false,
        track_total_hits: false,
        query: { bool: { filter } },
        sort: [{ mailbox_id: 'asc' }, { uid: 'asc' }],
        ...(after ? { search_after: after } : {}),
      });
      const hits = res.hits.hits;
      for (const h of hits) found.push(h.sort);
      if (hits.length < PAGE) break;
      after = hits[hits.length - 1].sort;
    }
  } catch (err) {
    // A user whose mail was never mirrored has no index yet: nothing matches.
    if (!isNotFound(err)) throw unavailable(err);
  }
  const esMs = Number(process.hrtime.bigint() - t0) / 1e6;
  if (!found.length) return { total: 0, hits: [], esMs };
  const hits = await storeOf(ctx).liveMessages(userId, found);
  return { total: hits.length, hits: opts.limit ? hits.slice(0, opts.limit) : hits, esMs };
}

module.exports = { searchEs };
