'use strict';

const { HealthProbe } = require('./health-probe');
const { Readable } = require('node:stream');
const { errors } = require('@mailgate/core');
const { compileSql } = require('@mailgate/query');
const { parseQuery } = require('./names');
const { HEADER_COLUMNS, headerRow, ndjsonLine } = require('./header-row');
const { splitFlags } = require('@mailgate/readers');
// Date order: the Date header, else INTERNALDATE, then uid; keyset dates as text (list-cache.js).
const { pageOf, SORT_DATE, SORT_DATE_TEXT } = require('./list-cache');
const { inMailbox, mustExist, isName, mailboxWhere } = require('./mailbox-ref');
const { wordsIn } = require('./words-sql');
const { chunksIn } = require('./chunks-sql');
const { notifyMailboxes } = require('./citus');
const { decodeRaw, rawColumnSql } = require('./raw-codec');
const { preparedOf, partitionOf } = require('./prepared-reads');
const { cursorBatches } = require('./cursor');

// Characters of NDJSON gathered before a chunk is handed on (streamHeadersNdjson).
const NDJSON_CHUNK_CHARS = 64 * 1024;

/*
 * Storage-interface operations the HTTP API needs beyond import/export: paged and streamed
 * header scans, one message with its raw bytes, flag changes, and two-phase expunge: plain
 * functions taking the store first (PgStore's methods of the same names call them). As
 * everywhere in the store, every query filters on user_id (partition pruning and isolation)
 * and every value is a bound parameter.
 * Flag changes and expunges bump the mailbox's HIGHESTMODSEQ and stamp the changed messages
 * with it, under the mailbox row lock (RFC 7162 CONDSTORE).
 */

/**
 * @param {{order?: 'uid'|'date', desc?: boolean, after?: {uid: number, date?: string}|null}} o
 * @returns {{orderBy: string, where: string, bindings: any[]}}
 */
function keyset(o) {
  const dir = o.desc ? 'DESC' : 'ASC';
  const cmp = o.desc ? '<' : '>';
  if (o.order === 'date') {
    const where = o.after ? `AND (${SORT_DATE}, m.uid) ${cmp} (?::timestamptz, ?)` : '';
    return {
      orderBy: `${SORT_DATE} ${dir}, m.uid ${dir}`,
      where,
      bindings: o.after ? [o.after.date, o.after.uid] : [],
    };
  }
  return {
    orderBy: `m.uid ${dir}`,
    where: o.after ? `AND m.uid ${cmp} ?` : '',
    bindings: o.after ? [o.after.uid] : [],
  };
}

/** A uid-ordered page of a cached row list (see scanPage). */
function pageFromList(list, opts) {
  const page = pageOf(list, {
    limit: opts.limit + 1,
    afterUid: opts.after ? opts.after.uid : undefined,
    order: opts.desc ? 'desc' : 'asc',
  });
  const more = page.length > opts.limit;
  const rows = more ? page.slice(0, opts.limit) : page;
  const last = rows[rows.length - 1];
  return { rows, next: more ? { uid: last.uid, date: null } : null };
}

/**
 * One page of header rows in uid or date order, keyset-paged.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number|{name: string}} mailbox id, or byName(name) (MAILBOX_NOT_FOUND when none)
 * @param {{limit: number, order?: 'uid'|'date', desc?: boolean, after?: {uid: number, date?: string}|null, withTotal?: boolean}} opts
 *   withTotal: also count the mailbox's visible messages (from the same cached list when
 *   the page comes from the list cache: one read of the mailbox row for both)
 * @returns {Promise<{rows: object[], next: {uid: number, date: string}|null, total?: number}>}
 *   next: the keyset position after the last row when more rows follow
 */
async function scanPage(store, userId, mailbox, opts) {
  const { rows, next, total } = await store.pageAndTotal(userId, mailbox, opts);
  return opts.withTotal ? { rows, next, total } : { rows, next };
}

/**
 * @private
 * @param {import('./pg-store').PgStore} store
 */
async function pageAndTotal(store, userId, mailbox, opts) {
  const cache = store.listCache;
  const cached = cache ? cache.cachedId(userId, mailbox) : null;
  if (cached != null && opts.order !== 'date') {
    // uid order: a page of the list cache and its length (one read of the mailbox row).
    const list = await cache.rowsOf(store.knex, userId, mailbox);
    mustExist(mailbox, list);
    if (!list) return { rows: [], next: null, total: 0 };
    return { ...pageFromList(list, opts), total: list.length };
  }
  if (!opts.withTotal) return store.pageOnly(userId, mailbox, opts);
  if (cached != null) {
    // Date order with the mailbox cached: the page from the cached rows in date order (one
    // read of the mailbox row, as in uid order) when they can answer exactly (list-cache.js
    // datePage)...
    const rows = await cache.rowsOf(store.knex, userId, mailbox);
    mustExist(mailbox, rows);
    if (!rows) return { rows: [], next: null, total: 0 };
    const fromList = cache.datePage(rows, opts);
    if (fromList) return { ...fromList, total: rows.length };
    // ...else the page by SQL, whose statement also reads the mailbox row (HIGHESTMODSEQ,
    // same snapshot); when the cached list is of that modseq, its length is the exact total.
    const page = await store.pageOnly(userId, mailbox, opts);
    const mb = page.mailbox;
    const list = mb ? cache.current(userId, mb.id, mb.highestmodseq) : null;
    if (list) return { ...page, total: list.length };
    const { total } = mb ? await store.countMessages(userId, mb.id) : { total: 0 };
    return { ...page, total };
  }
  // Two independent reads: side by side, the page costs the slower one, not the sum. Each
  // resolves the name itself; should a rename in between make them name two mailboxes, the
  // count is read again for the page's.
  const [count, page] = await Promise.all([
    store.countIn(userId, mailbox),
    store.pageOnly(userId, mailbox, opts),
  ]);
  if (page.mailbox && (!count.mailbox || count.mailbox.id !== page.mailbox.id)) {
    return { ...page, total: (await store.countIn(userId, page.mailbox.id)).total };
  }
  return { ...page, total: count.total };
}

/**
 * @param {import('./pg-store').PgStore} store
 * @private scanPage without the count, with the mailbox row the statement read
 * ({id, highestmodseq}; absent when the page came from the list cache).
 */
async function pageOnly(store, userId, mailbox, opts) {
  const cache = store.listCache;
  if (cache && opts.order !== 'date' && cache.cachedId(userId, mailbox) != null) {
    // uid order: a page of the list cache (exact by modseq, see list-cache.js).
    const list = await cache.rowsOf(store.knex, userId, mailbox);
    mustExist(mailbox, list);
    if (!list) return { rows: [], next: null };
    return pageFromList(list, opts);
  }
  const k = keyset(opts);
  const { mailbox: mb, rows: found } = await inMailbox(
    store.knex,
    userId,
    mailbox,
    `SELECT ${HEADER_COLUMNS}, ${SORT_DATE_TEXT} AS sort_date FROM messages m
      WHERE m.user_id = ? AND m.mailbox_id = b.id AND NOT m.expunged ${k.where}
      ORDER BY ${k.orderBy} LIMIT ?`,
    [userId, ...k.bindings, opts.limit + 1],
  );
  mustExist(mailbox, mb);
  if (mb && cache && isName(mailbox)) cache.noteName(userId, mailbox.name, mb.id);
  if (mb && cache && opts.order !== 'date' && !cache.has(userId, mb.id)) {
    // Not cached yet: this page by SQL (a few ms), the whole mailbox loads in the background.
    cache.warm(store.knex, userId, mb.id);
  }
  const more = found.length > opts.limit;
  const rows = more ? found.slice(0, opts.limit) : found;
  const last = rows[rows.length - 1];
  return {
    rows: rows.map(headerRow),
    next: more ? { uid: Number(last.uid), date: last.sort_date } : null,
    mailbox: mb,
  };
}

/**
 * The whole mailbox as NDJSON text (one header row per line) from a server-side cursor: the
 * rows come 256 at a time (cursorBatches: no read-ahead) and each line is built by ndjsonLine,
 * the list cache's own builder, so a cold answer is byte for byte the warm one (cachedNdjson).
 * Memory stays bounded by one cursor batch and one ~64 KB chunk, whatever the mailbox size:
 * the chunks are pulled by the reader, so the socket's backpressure holds the cursor. The
 * lines used to be spliced by COPY from a JSON fragment stored in every row
 * (`messages.header_json`, dropped for issue 30.6: ~60 MB of the Enron set's 739, a second
 * copy of the header columns). In uid order a
 * mailbox the list cache holds is served from memory instead (cachedNdjson: no cursor).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number} mailboxId
 * @param {{order?: 'uid'|'date', desc?: boolean, onFirstBatch?: (ms: number) => void}} [opts]
 * @returns {import('node:stream').Readable} a byte stream of NDJSON
 */
function streamHeadersNdjson(store, userId, mailboxId, opts = {}) {
  const uid = Number(userId);
  const mid = Number(mailboxId);
  if (!Number.isInteger(uid) || !Number.isInteger(mid)) throw new TypeError('integer ids required');
  if (store.listCache && opts.order !== 'date') {
    if (store.listCache.has(uid, mid)) return store.cachedNdjson(uid, mid, opts);
    // Cold: this answer is read by a cursor; the next one comes from memory (issue 13: < 100 ms).
    store.listCache.warm(store.knex, uid, mid);
  }
  const k = keyset({ order: opts.order, desc: opts.desc });
  const sql = `SELECT ${HEADER_COLUMNS} FROM messages m
     WHERE m.user_id = $1 AND m.mailbox_id = $2 AND NOT m.expunged
     ORDER BY ${k.orderBy}`;
  async function* chunks() {
    const t0 = process.hrtime.bigint();
    let out = '';
    let first = true;
    for await (const batch of cursorBatches(store.knex, sql, [uid, mid])) {
      if (first && opts.onFirstBatch) {
        opts.onFirstBatch(Number(process.hrtime.bigint() - t0) / 1e6);
      }
      first = false;
      for (const row of batch) {
        out += ndjsonLine(headerRow(row));
        if (out.length >= NDJSON_CHUNK_CHARS) {
          yield Buffer.from(out);
          out = '';
        }
      }
    }
    if (out) yield Buffer.from(out);
  }
  return Readable.from(chunks(), { objectMode: false });
}

/**
 * streamHeadersNdjson from the list cache (uid order): one primary-key read of the mailbox
 * row (plus the delta when it moved, list-cache.js), then lines from memory in ~1 MB
 * chunks pulled by the reader. No database connection is held while the client reads, so
 * a stalled reader costs memory only (its rows), never a pooled connection (issue 17).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number} mailboxId
 * @param {{desc?: boolean, onFirstBatch?: (ms: number) => void}} opts
 * @returns {import('node:stream').Readable}
 */
function cachedNdjson(store, userId, mailboxId, opts) {
  const cache = store.listCache;
  const knex = store.knex;
  async function* chunks() {
    const t0 = process.hrtime.bigint();
    const list = (await cache.rowsOf(knex, userId, mailboxId)) || [];
    if (opts.onFirstBatch) opts.onFirstBatch(Number(process.hrtime.bigint() - t0) / 1e6);
    yield* cache.ndjsonChunks(userId, mailboxId, list, Boolean(opts.desc));
  }
  return Readable.from(chunks(), { objectMode: false });
}

/**
 * The whole mailbox's header rows as an async iterable, from a server-side cursor (memory
 * stays bounded whatever the mailbox size).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number} mailboxId
 * @param {{order?: 'uid'|'date', desc?: boolean}} [opts]
 * @returns {AsyncIterable<object>}
 */
async function* streamHeaderRows(store, userId, mailboxId, opts = {}) {
  if (store.listCache && opts.order !== 'date') {
    // uid order: the list cache's rows (exact by modseq, see list-cache.js).
    const list = (await store.listCache.rowsOf(store.knex, userId, mailboxId)) || [];
    if (!opts.desc) yield* list;
    else for (let i = list.length - 1; i >= 0; i--) yield list[i];
    return;
  }
  const k = keyset({ order: opts.order, desc: opts.desc });
  const sql = `SELECT ${HEADER_COLUMNS} FROM messages m
     WHERE m.user_id = $1 AND m.mailbox_id = $2 AND NOT m.expunged
     ORDER BY ${k.orderBy}`;
  // cursorBatches, not knex's .stream(): a lost connection ends this with an error instead
  // of a hang, and a consumer that stops early gives the connection back.
  for await (const batch of cursorBatches(store.knex, sql, [Number(userId), Number(mailboxId)])) {
    for (const row of batch) yield headerRow(row);
  }
}

/**
 * Raw bytes of many messages in one query (IMAP FETCH of a range), in uid order; expunged
 * ones are absent. With `prefix`, only the first `prefix` bytes of each: PostgreSQL reads
 * and decompresses only the start of a compressed out-of-line value (raw is compressed since
 * migrations/20261127500000_compressed_text.js), so a header-only FETCH does not drag whole
 * bodies through the buffer cache.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number|{name: string}} mailbox id, or byName(name) (MAILBOX_NOT_FOUND when none)
 * @param {number[]} uids
 * @param {{prefix?: number}} [opts]
 * @returns {Promise<Array<{uid: number, raw: Buffer}>>}
 */
async function sourcesFor(store, userId, mailbox, uids, opts = {}) {
  if (!uids.length && !isName(mailbox)) return [];
  return (await store.sourcesWithMailbox(userId, mailbox, uids, opts)).rows;
}

/**
 * sourcesFor, with the mailbox row the same statement read (one snapshot): what an IMAP
 * FETCH needs to check that its selected mailbox is still the one it opened, without a
 * round trip of its own.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number|{name: string}} mailbox id, or byName(name) (MAILBOX_NOT_FOUND when none)
 * @param {number[]} uids
 * @param {{prefix?: number, hidden?: boolean}} [opts] hidden: also the bytes of messages an
 *   expunge hid and the purge has not removed yet, for a caller that decides visibility
 *   itself (IMAP FETCH: from its list view at this statement's mailbox state). The statement
 *   then reads message_sources alone: the join on the partitioned messages table for
 *   `NOT expunged` was ~0.12 of its ~0.17 ms of planning and execution on the large Enron
 *   mailbox (issue 35.4, a FETCH of one message)
 * @returns {Promise<{mailbox: {id: number, highestmodseq: number, uidvalidity: number, uidnext: number}|null, rows: Array<{uid: number, raw: Buffer}>}>}
 */
async function sourcesWithMailbox(store, userId, mailbox, uids, opts = {}) {
  const prefix = Number(opts.prefix) > 0 ? Math.floor(Number(opts.prefix)) : null;
  if (opts.hidden && !prefix) {
    const table = await partitionOf(store, 'message_sources', userId);
    if (table) return hiddenSourcesPrepared(store, table, userId, mailbox, uids);
  }
  const col = rawColumnSql('s', Boolean(prefix));
  const { mailbox: mb, rows } = await inMailbox(
    store.knex,
    userId,
    mailbox,
    opts.hidden
      ? `SELECT s.uid, ${col} FROM message_sources s
      WHERE s.user_id = ? AND s.mailbox_id = b.id AND s.uid = ANY(?::bigint[])
      ORDER BY s.uid`
      : `SELECT s.uid, ${col} FROM message_sources s
       JOIN messages m
         ON m.user_id = s.user_id AND m.mailbox_id = s.mailbox_id AND m.uid = s.uid
      WHERE s.user_id = ? AND s.mailbox_id = b.id AND s.uid = ANY(?::bigint[])
        AND m.user_id = ? AND m.mailbox_id = b.id AND NOT m.expunged
      ORDER BY s.uid`,
    [...(prefix ? [prefix] : []), userId, uids, ...(opts.hidden ? [] : [userId])],
  );
  mustExist(mailbox, mb);
  return {
    mailbox: mb,
    rows: rows.map((x) => ({ uid: Number(x.uid), raw: decodeRaw(x.raw, x.raw_codec, prefix) })),
  };
}

/**
 * sourcesWithMailbox `hidden` (IMAP FETCH's read of message bytes, the first fetch of a message)
 * as a prepared read (prepared-reads.js): a named statement on the user's own partition whose
 * generic plan PostgreSQL keeps per connection, so a call is not planned again (planning was
 * 0.2-0.3 ms of a statement that runs in ~0.03; issue 35.4). The same statement as inMailbox
 * makes, with `$n` parameters. Not on Citus (partitionOf null): citus.js point 8.
 */
async function hiddenSourcesPrepared(store, table, userId, mailbox, uids) {
  const w = mailboxWhere(mailbox);
  const byId = !isName(mailbox);
  const rows = await preparedOf(store).rows(
    `mg_sources_${byId ? 'id' : 'name'}_${table}`,
    `SELECT b.id AS mb_id, b.highestmodseq AS mb_modseq, b.uidvalidity AS mb_uidvalidity,
            b.uidnext AS mb_uidnext, x.*
       FROM mailboxes b LEFT JOIN LATERAL (
         SELECT s.uid, ${rawColumnSql('s', false)} FROM ${table} s
          WHERE s.user_id = $1 AND s.mailbox_id = b.id AND s.uid = ANY($2::bigint[])
          ORDER BY s.uid) x ON true
      WHERE b.user_id = $1 AND ${byId ? 'b.id = $3' : 'b.name = $3'}`,
    [userId, uids, w.value],
  );
  const mb = rows.length
    ? {
        id: Number(rows[0].mb_id),
        highestmodseq: Number(rows[0].mb_modseq),
        uidvalidity: Number(rows[0].mb_uidvalidity),
        uidnext: Number(rows[0].mb_uidnext),
      }
    : null;
  mustExist(mailbox, mb);
  const found = rows.length && rows[0].uid !== null ? rows : [];
  return {
    mailbox: mb,
    rows: found.map((x) => ({ uid: Number(x.uid), raw: decodeRaw(x.raw, x.raw_codec) })),
  };
}

/**
 * One message's header row and raw bytes, or null (also for expunged messages).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number|{name: string}} mailbox id, or byName(name) (MAILBOX_NOT_FOUND when none)
 * @param {number} uid
 * @returns {Promise<{header: object, raw: Buffer}|null>}
 */
async function getMessage(store, userId, mailbox, uid) {
  const { mailbox: mb, rows } = await inMailbox(
    store.knex,
    userId,
    mailbox,
    `SELECT ${HEADER_COLUMNS}, ${rawColumnSql('s', false)} FROM messages m
       JOIN message_sources s
         ON s.user_id = m.user_id AND s.mailbox_id = m.mailbox_id AND s.uid = m.uid
      WHERE m.user_id = ? AND m.mailbox_id = b.id AND m.uid = ? AND NOT m.expunged
        AND s.user_id = ? AND s.mailbox_id = b.id`,
    [userId, uid, userId],
  );
  mustExist(mailbox, mb);
  if (!rows.length) return null;
  return { header: headerRow(rows[0]), raw: decodeRaw(rows[0].raw, rows[0].raw_codec) };
}

/**
 * Header rows for search hits, in the order given.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {Array<{mailboxId: number, uid: number}>} hits
 * @returns {Promise<object[]>} header rows with mailboxId
 */
async function headersFor(store, userId, hits) {
  if (!hits.length) return [];
  const r = await store.knex.raw(
    `SELECT ${HEADER_COLUMNS} FROM messages m
       JOIN unnest(?::int[], ?::bigint[]) WITH ORDINALITY AS k(mailbox_id, uid, n)
         ON m.mailbox_id = k.mailbox_id AND m.uid = k.uid
      WHERE m.user_id = ? AND NOT m.expunged
      ORDER BY k.n`,
    [hits.map((h) => h.mailboxId), hits.map((h) => h.uid), userId],
  );
  return r.rows.map((row) => ({ ...headerRow(row), mailboxId: row.mailbox_id }));
}

/**
 * Adds and removes flags (`\Seen` …) and keywords (`$Label1`, `Junk` …) on the messages
 * selected by uids or by a query (text or AST), in one transaction. Only messages whose
 * flags actually change get the new modseq.
 *
 * IMAP STORE's two conditions are decided here, under the mailbox lock that every change of
 * the mailbox's rows takes, so no other change comes between the check and the write:
 * `replace` sets the flags and keywords to exactly `add` (STORE FLAGS), and
 * `unchangedSince` (RFC 7162 3.1.3 UNCHANGEDSINCE) leaves every selected message whose
 * modseq is above it as it is and lists it in `modified` (0: those where a named flag
 * exists, see below).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number|{name: string}} mailbox id, or byName(name) (locked, MAILBOX_NOT_FOUND when none)
 * @param {{uids?: number[], query?: string|object, add?: string[], remove?: string[],
 *   replace?: boolean, unchangedSince?: number|null}} opts
 * @returns {Promise<{matched: number, changed: Array<{uid: number, flags: string[], keywords: string[], modseq: number}>, highestModseq: number, modified: number[]}>}
 */
async function setFlags(store, userId, mailbox, opts) {
  const add = splitFlags(opts.add);
  const remove = splitFlags(opts.remove);
  let selector;
  let selBindings;
  if (opts.uids) {
    selector = 'm.uid = ANY(?::bigint[])';
    selBindings = [opts.uids];
  } else {
    const ast = typeof opts.query === 'string' ? parseQuery(opts.query) : opts.query;
    await store.checkQueryMailboxes(userId, ast);
    const w = compileSql(ast, {
      alias: 'm',
      userId,
      words: wordsIn(userId),
      substring: chunksIn(userId),
    });
    selector = w.sql;
    selBindings = w.bindings;
  }
  const replace = Boolean(opts.replace);
  const newSet = (col, alias) =>
    replace
      ? `ARRAY(SELECT DISTINCT ${alias} FROM unnest(?::text[]) AS ${alias} ORDER BY ${alias})`
      : `ARRAY(SELECT DISTINCT ${alias} FROM unnest(m.${col} || ?::text[]) AS ${alias}
                WHERE ${alias} <> ALL(?::text[]) ORDER BY ${alias})`;
  const setBindings = (part) => (replace ? [add[part]] : [add[part], remove[part]]);
  const since = opts.unchangedSince == null ? null : Number(opts.unchangedSince);
  // RFC 7162 3.1.3: UNCHANGEDSINCE 0 fails only where a named item exists: always for a
  // system flag, for a keyword only where the message has it (Example 8: $MDNSent set once).
  const named = replace
    ? add
    : { flags: [...add.flags, ...remove.flags], keywords: [...add.keywords, ...remove.keywords] };
  const late =
    since === null
      ? 'false'
      : since === 0
        ? '(?::boolean OR EXISTS (SELECT 1 FROM unnest(m.keywords) k WHERE lower(k) = ANY(?::text[])))'
        : 'm.modseq > ?::bigint';
  const lateBindings =
    since === null
      ? []
      : since === 0
        ? [named.flags.length > 0, named.keywords.map((k) => k.toLowerCase())] // keywords: any case
        : [since];
  return store.knex.transaction(async (trx) => {
    const mb = await lockMailbox(trx, userId, mailbox);
    const mailboxId = mb.id;
    const modseq = Number(mb.highestmodseq) + 1;
    const r = await trx.raw(
      `WITH sel AS (
         SELECT m.uid, m.flags, m.keywords, m.modseq, ${late} AS late,
                ${newSet('flags', 'f')} AS nf,
                ${newSet('keywords', 'x')} AS nk
           FROM messages m
          WHERE m.user_id = ? AND m.mailbox_id = ? AND NOT m.expunged AND (${selector})
       ), upd AS (
         UPDATE messages t SET flags = sel.nf, keywords = sel.nk, modseq = ?
           FROM sel
          WHERE t.user_id = ? AND t.mailbox_id = ? AND t.uid = sel.uid
            AND NOT sel.late
            AND NOT (sel.nf @> sel.flags AND sel.flags @> sel.nf
                     AND sel.nk @> sel.keywords AND sel.keywords @> sel.nk)
         RETURNING t.uid, t.flags, t.keywords, t.modseq
       )
       SELECT (SELECT count(*) FROM sel)::int AS matched,
              (SELECT coalesce(json_agg(upd ORDER BY upd.uid), '[]'::json) FROM upd) AS changed,
              (SELECT coalesce(json_agg(sel.uid ORDER BY sel.uid), '[]'::json) FROM sel
                WHERE sel.late) AS modified`,
      [
        ...lateBindings,
        ...setBindings('flags'),
        ...setBindings('keywords'),
        userId,
        mailboxId,
        ...selBindings,
        modseq,
        userId,
        mailboxId,
      ],
    );
    const { matched, changed, modified } = r.rows[0];
    let highestModseq = Number(mb.highestmodseq);
    if (changed.length) {
      const uids = changed.map((c) => c.uid);
      await recordChange(store, trx, userId, mailboxId, uids, modseq);
      highestModseq = modseq;
    }
    return { matched, changed, highestModseq, modified: modified.map(Number) };
  });
}

/**
 * Phase one of expunge (IMAP semantics): messages flagged `\Deleted` (only those among
 * `uids` when given, as UID EXPUNGE) are hidden at once — every read filters
 * `NOT expunged` — and stamped with a new modseq. purgeExpunged() removes the rows later.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number|{name: string}} mailbox id, or byName(name) (locked, MAILBOX_NOT_FOUND when none)
 * With `force` (and `uids`), the given messages are expunged whether or not they carry
 * `\Deleted` — a webmail "delete now" (JMAP Email/set destroy) in one row update instead of
 * IMAP's STORE +FLAGS \Deleted followed by EXPUNGE, i.e. one new row version per message
 * instead of two.
 * @param {number} userId
 * @param {number|{name: string}} mailbox id, or byName(name) (locked, MAILBOX_NOT_FOUND when none)
 * @param {{uids?: number[], force?: boolean}} [opts]
 * @returns {Promise<{expunged: number[], highestModseq: number, mailboxId: number}>}
 */
async function expunge(store, userId, mailbox, opts = {}) {
  if (opts.force && !opts.uids) throw new TypeError('expunge: force needs uids');
  return store.knex.transaction(async (trx) => {
    const mb = await lockMailbox(trx, userId, mailbox);
    const mailboxId = mb.id;
    const modseq = Number(mb.highestmodseq) + 1;
    const bindings = [modseq, userId, mailboxId];
    let only = '';
    if (!opts.force) {
      only = 'AND ? = ANY(flags)';
      bindings.push('\\Deleted');
    }
    if (opts.uids) {
      only += ' AND uid = ANY(?::bigint[])';
      bindings.push(opts.uids);
    }
    const r = await trx.raw(
      `UPDATE messages SET expunged = true, modseq = ?
        WHERE user_id = ? AND mailbox_id = ? AND NOT expunged ${only}
        RETURNING uid`,
      bindings,
    );
    const uids = r.rows.map((x) => Number(x.uid)).sort((a, b) => a - b);
    if (!uids.length) {
      return { expunged: [], highestModseq: Number(mb.highestmodseq), mailboxId };
    }
    // The ES delete is queued here, with the hide: purgeExpunged() only removes rows
    // already hidden, so it needs no outbox rows of its own.
    if (store.outbox) await writeOutbox(trx, userId, mailboxId, uids, modseq, 'delete');
    await bumpModseq(trx, userId, mailboxId, modseq, uids.length);
    return { expunged: uids, highestModseq: modseq, mailboxId };
  });
}

/**
 * Undoes phase one of expunge for messages not purged yet: they are visible again, with
 * their uids, flags and bytes, stamped with a new modseq (a CONDSTORE client sees them
 * change; the ES mirror re-indexes them). The benchmark restores its mailbox with it
 * between expunge samples; an admin can rescue a mistaken expunge the same way while the
 * purge is held off. Messages already purged are not returned.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number|{name: string}} mailbox id, or byName(name) (locked, MAILBOX_NOT_FOUND when none)
 * @param {number[]} uids
 * @returns {Promise<{restored: number[], highestModseq: number}>}
 */
async function restoreExpunged(store, userId, mailbox, uids) {
  return store.knex.transaction(async (trx) => {
    const mb = await lockMailbox(trx, userId, mailbox);
    const mailboxId = mb.id;
    const modseq = Number(mb.highestmodseq) + 1;
    const r = await trx.raw(
      `UPDATE messages SET expunged = false, modseq = ?
        WHERE user_id = ? AND mailbox_id = ? AND expunged AND uid = ANY(?::bigint[])
        RETURNING uid`,
      [modseq, userId, mailboxId, uids],
    );
    const restored = r.rows.map((x) => Number(x.uid)).sort((a, b) => a - b);
    if (!restored.length) return { restored, highestModseq: Number(mb.highestmodseq) };
    if (store.outbox) await writeOutbox(trx, userId, mailboxId, restored, modseq, 'index');
    await bumpModseq(trx, userId, mailboxId, modseq, -restored.length);
    return { restored, highestModseq: modseq };
  });
}

/**
 * Phase two of expunge: deletes hidden rows from messages and message_sources, in small
 * batches (one short transaction each), so index maintenance never holds locks for long
 * and autovacuum keeps up — the step where the 2003 MySQL schema collapsed.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number} mailboxId an id (the purger's; names are not taken here)
 * @param {{batchSize?: number, signal?: AbortSignal, uids?: number[]}} [opts] uids: the
 *   hidden rows to purge are among these (the expunge's answer): found by the primary key,
 *   not by a scan of the user's partition for hidden rows (issue 35.4: 1% of the large Enron
 *   mailbox beside a copy of it, a sequential scan of ~85 MB per batch and again for the
 *   recount), and the mailbox's count of hidden rows is decremented instead of recounted
 * @returns {Promise<number>} rows purged
 */
async function purgeExpunged(store, userId, mailboxId, opts = {}) {
  const size = opts.batchSize || 500;
  const byUid = Array.isArray(opts.uids);
  if (byUid && !opts.uids.length) return 0;
  let total = 0;
  for (;;) {
    if (opts.signal && opts.signal.aborted) break;
    const n = await store.knex.transaction(async (trx) => {
      // The mailbox row first, as expunge, restoreExpunged and a MOVE take it: a purge that
      // held deleted rows while waiting for it could deadlock with a restore of those rows.
      const mb = await trx.raw('SELECT id FROM mailboxes WHERE user_id = ? AND id = ? FOR UPDATE', [
        userId,
        mailboxId,
      ]);
      if (!mb.rows.length) return 0;
      // SKIP LOCKED: a hidden row another transaction holds is left to the next purge (the
      // last batch's recount keeps it counted, so pendingPurges lists the mailbox again).
      // Waiting for it with the mailbox lock held could close a cycle with a writer that
      // locks rows before the mailbox: the import's thread stage gives first thread ids,
      // hidden old rows among them, then locks mailboxes for merged ones (thread-ops.js).
      const r = await trx.raw(
        `WITH victims AS (
           SELECT uid FROM messages
            WHERE user_id = ? AND mailbox_id = ? AND expunged
              ${byUid ? 'AND uid = ANY(?::bigint[])' : ''} ORDER BY uid LIMIT ?
              FOR UPDATE SKIP LOCKED
         ), dm AS (
           DELETE FROM messages m USING victims v
            WHERE m.user_id = ? AND m.mailbox_id = ? AND m.uid = v.uid AND m.expunged
           RETURNING m.uid, m.modseq
         ), tomb AS (
           -- changesSince() still reports these uids as expunged after the purge.
           INSERT INTO expunged_uids (user_id, mailbox_id, uid, modseq)
           SELECT ?, ?, uid, modseq FROM dm
           ON CONFLICT (user_id, mailbox_id, uid) DO UPDATE SET modseq = EXCLUDED.modseq
         ), ds AS (
           DELETE FROM message_sources s USING dm
            WHERE s.user_id = ? AND s.mailbox_id = ? AND s.uid = dm.uid
           RETURNING 1
         ), di AS (
           DELETE FROM message_imap i USING dm
            WHERE i.user_id = ? AND i.mailbox_id = ? AND i.uid = dm.uid
         ), dl AS (
           DELETE FROM message_imap_lines l USING dm
            WHERE l.user_id = ? AND l.mailbox_id = ? AND l.uid = dm.uid
         )
         SELECT (SELECT count(*) FROM dm)::int AS purged, (SELECT count(*) FROM ds)::int AS sources`,
        [
          userId,
          mailboxId,
          ...(byUid ? [opts.uids.map(Number)] : []),
          size,
          userId,
          mailboxId,
          userId,
          mailboxId,
          userId,
          mailboxId,
          // message_imap (di), message_imap_lines (dl)
          userId,
          mailboxId,
          userId,
          mailboxId,
        ],
      );
      const purged = r.rows[0].purged;
      // The hidden rows deleted here leave the mailbox's count in the same transaction
      // (migrations/20261126000000_expunged_pending.js). The last batch of a purge that
      // scans counts what is left instead, under the lock: a count that went wrong (rows
      // hidden by hand, or by a process older than the count) is repaired by the next such
      // purge (a restart's), and a batch never takes it below zero (the CHECK would roll the
      // purge back, every time). A purge by uid only decrements: a recount is the scan it
      // avoids.
      if (purged < size && !byUid) {
        await trx.raw(
          `UPDATE mailboxes SET expunged_pending = (SELECT count(*) FROM messages
              WHERE user_id = ? AND mailbox_id = ? AND expunged)
            WHERE user_id = ? AND id = ?`,
          [userId, mailboxId, userId, mailboxId],
        );
      } else {
        await trx.raw(
          `UPDATE mailboxes SET expunged_pending = greatest(expunged_pending - ?, 0)
            WHERE user_id = ? AND id = ?`,
          [purged, userId, mailboxId],
        );
      }
      return purged;
    });
    total += n;
    if (n < size) break;
  }
  // Deleting many rows moves the row counts and the mailbox/uid statistics the next plans
  // read: refreshed after the last batch, outside every mailbox lock (stats-ops.js).
  await store.refreshStatsAfterBulk(userId, total);
  return total;
}

/**
 * A round trip to PostgreSQL for health checks, on a connection of its own so it never
 * waits behind pooled user work (health-probe.js).
 * @param {import('./pg-store').PgStore} store
 * @returns {Promise<void>}
 */
async function ping(store) {
  if (!store.healthProbe) store.healthProbe = new HealthProbe(store.knex);
  await store.healthProbe.ping();
}

/**
 * How full the connection pool is (health, issue 29.4): connections in use and idle, the
 * pool's size, and requests waiting for a connection. `saturated`: every connection is
 * taken and someone waits.
 * @param {import('./pg-store').PgStore} store
 * @returns {{size: number, used: number, free: number, waiting: number, saturated: boolean}}
 */
function poolStats(store) {
  const pool = store.knex.client && store.knex.client.pool;
  if (!pool) return { size: 0, used: 0, free: 0, waiting: 0, saturated: false };
  const used = pool.numUsed();
  const waiting = pool.numPendingAcquires() + pool.numPendingCreates();
  const size = pool.max;
  return { size, used, free: pool.numFree(), waiting, saturated: used >= size && waiting > 0 };
}

/**
 * Closes the health check's connection (before the pool is destroyed).
 * @param {import('./pg-store').PgStore} store
 */
async function closeHealthProbe(store) {
  if (store.healthProbe) await store.healthProbe.close();
}

/**
 * Waits for the list cache's background loads (before the pool is destroyed): a load still
 * waiting for a connection when the pool goes away is aborted, and knex reports that on
 * stdout, which broke `ls --json` right after a page had started one.
 * @param {import('./pg-store').PgStore} store
 * @returns {Promise<void>}
 */
async function settleBackground(store) {
  if (store.listCache) await store.listCache.settle();
  if (store.listViewCache) await store.listViewCache.settle();
  if (store.settleStats) await store.settleStats();
}

/**
 * Mailboxes holding hidden rows not purged yet (after a crash or shutdown mid-purge), read
 * from the rows themselves: this start-up safety net does not rely on `expunged_pending`.
 * Mailboxes whose count is above 0 are listed too, so that a purge recounts them.
 * @param {import('./pg-store').PgStore} store
 * @returns {Promise<Array<{userId: number, mailboxId: number}>>}
 */
async function pendingPurges(store) {
  const users = await store.knex('users').select('id');
  const out = [];
  for (const u of users) {
    const r = await store.knex.raw(
      `SELECT DISTINCT mailbox_id FROM messages WHERE user_id = ? AND expunged
       UNION SELECT id FROM mailboxes WHERE user_id = ? AND expunged_pending > 0`,
      [u.id, u.id],
    );
    for (const row of r.rows) out.push({ userId: u.id, mailboxId: Number(row.mailbox_id) });
  }
  return out;
}

/**
 * Locks a mailbox row (by id, or byName: the name resolved by this same statement, and no
 * rename or delete can move it until the transaction ends) and returns its id and
 * HIGHESTMODSEQ; MAILBOX_NOT_FOUND when there is none.
 * @param {{raw: Function}} trx
 * @param {number} userId
 * @param {number|{name: string}} mailbox
 * @returns {Promise<{id: number, highestmodseq: string|number}>}
 */
async function lockMailbox(trx, userId, mailbox) {
  const w = mailboxWhere(mailbox);
  const r = await trx.raw(
    `SELECT b.id, b.highestmodseq FROM mailboxes b WHERE ${w.sql} AND b.user_id = ? FOR UPDATE`,
    [w.value, userId],
  );
  if (!r.rows.length) {
    throw new errors.MAILBOX_NOT_FOUND(isName(mailbox) ? mailbox.name : String(mailbox));
  }
  return { ...r.rows[0], id: Number(r.rows[0].id) };
}

/**
 * Queues changed messages for the Elasticsearch mirror inside the caller's transaction
 * (transactional outbox, see packages/es/README.md).
 */
async function writeOutbox(trx, userId, mailboxId, uids, modseq, op) {
  await trx.raw(
    `INSERT INTO es_outbox (user_id, mailbox_id, uid, modseq, op)
     SELECT ?, ?, u, ?, ? FROM unnest(?::bigint[]) AS u`,
    [userId, mailboxId, modseq, op, uids],
  );
}

/**
 * A change of messages, recorded in the caller's transaction (under the mailbox row lock):
 * their es_outbox rows when the mirror is on, and the mailbox's new HIGHESTMODSEQ.
 * @param {import('./pg-store').PgStore} store
 * @param {{outbox: boolean}} store
 */
async function recordChange(store, trx, userId, mailboxId, uids, modseq, op = 'index') {
  if (store.outbox && uids.length) await writeOutbox(trx, userId, mailboxId, uids, modseq, op);
  await bumpModseq(trx, userId, mailboxId, modseq);
}

/**
 * Sets a mailbox's highest modseq; `hidden` rows changed their `expunged` state in the same
 * transaction (positive: hidden now, negative: visible again), counted in `expunged_pending`
 * (migrations/20261126000000_expunged_pending.js).
 */
async function bumpModseq(trx, userId, mailboxId, modseq, hidden = 0) {
  await trx.raw(
    `UPDATE mailboxes SET highestmodseq = ?, expunged_pending = expunged_pending + ?
      WHERE id = ? AND user_id = ?`,
    [modseq, hidden, mailboxId, userId],
  );
  // Citus: IDLE sessions are told by the store, not the dropped trigger (citus.js, point 6).
  await notifyMailboxes(trx, trx, userId, [mailboxId]);
}

module.exports = {
  scanPage,
  pageAndTotal,
  pageOnly,
  streamHeadersNdjson,
  cachedNdjson,
  streamHeaderRows,
  sourcesFor,
  sourcesWithMailbox,
  getMessage,
  headersFor,
  setFlags,
  expunge,
  restoreExpunged,
  purgeExpunged,
  ping,
  poolStats,
  closeHealthProbe,
  settleBackground,
  pendingPurges,
  lockMailbox,
  writeOutbox,
  bumpModseq,
  recordChange,
};
