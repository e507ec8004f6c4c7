'use strict';

/*
 * What the Elasticsearch mirror (@mailgate/es) reads and the outbox it drains: the SQL of the
 * mirror lives here, @mailgate/es only talks to ES. Plain functions taking the store
 * first (PgStore's methods of the same names call them).
 * Documents are built from the current row (state shipping, see packages/es/README.md): the
 * outbox only says "this message changed".
 */

const { textOf } = require('./chunks-sql');

// The message's tsvector as (position, lexeme) pairs in position order: ES indexes exactly
// PostgreSQL's words (@mailgate/es words.js), and its phrases need their positions. The stored
// vector has none (migrations/20261203240100_words_stripped.js), so the positioned one is
// computed again here, by the trigger's own mailgate_words, from the row and its body text
// (read back from its pieces, or from the row for one stored before the text left it). It
// covers subject, From/To/Cc text and the first 200,000 body characters, so the body itself is
// not shipped.
// unnest's columns named: Citus deparses the subquery for the worker and loses an unnamed one.
const lexemePairs = (tsv) =>
  `(SELECT json_agg(json_build_array(p, u.lexeme) ORDER BY p, u.lexeme)
      FROM unnest(${tsv}) AS u(lexeme, positions, weights), unnest(u.positions) AS p)`;

// The pieces' subquery names the user by its parameter (the statement's first): correlated on
// m.user_id alone, Citus cannot prove it stays in one shard and plans a task per shard.
const DOC_COLUMNS = `m.mailbox_id, b.name AS mailbox, m.uid, m.modseq, m.expunged, m.subject,
  m.from_name, m.from_addr, m.from_text, m.to_addrs, m.to_text, m.cc_addrs, m.cc_text,
  m.message_id, m.date, m.internal_date, m.size, m.flags, m.keywords, m.has_attachments,
  ${lexemePairs(`mailgate_words(m.subject, m.from_text || ' ' || m.to_text || ' ' || m.cc_text,
      CASE WHEN m.body_text <> '' THEN m.body_text ELSE ${textOf('m', 1, '?')} END)`)} AS lexemes`;

// Arbitrary constant naming the drainer lock in pg_advisory_xact_lock's key space: one
// drainer at a time cluster-wide (`mailgate serve` and `es sync`); reindex waits on it.
const DRAIN_LOCK = 0x6d67_6573; // 'mges'

async function docRows(db, userId, keys) {
  const r = await db.raw(
    `SELECT ${DOC_COLUMNS} FROM messages m
       JOIN unnest(?::int[], ?::bigint[]) AS k(mailbox_id, uid)
         ON m.mailbox_id = k.mailbox_id AND m.uid = k.uid
       JOIN mailboxes b ON b.id = m.mailbox_id AND b.user_id = m.user_id
      WHERE m.user_id = ?`,
    [userId, keys.map((k) => k.mailboxId), keys.map((k) => k.uid), userId],
  );
  return r.rows;
}

/**
 * One drain step of the outbox in ONE transaction: takes the drainer lock (or answers
 * `{busy: true}`), reads the oldest rows, lets `ship(rows, loadRows)` send them, and deletes
 * them only when `ship` resolves — a crash or a failed ship leaves them queued.
 * @param {import('./pg-store').PgStore} store
 * @param {number} limit rows per step
 * @param {(rows: object[], loadRows: (userId: number, keys: Array<{mailboxId: number, uid: number}>) => Promise<object[]>) => Promise<object>} ship
 * @returns {Promise<{busy?: boolean, rows: number} & object>}
 */
async function drainOutbox(store, limit, ship) {
  return store.knex.transaction(async (trx) => {
    const lock = await trx.raw('SELECT pg_try_advisory_xact_lock(?) AS ok', [DRAIN_LOCK]);
    if (!lock.rows[0].ok) return { busy: true, rows: 0 };
    const rows = (
      await trx.raw(
        'SELECT id, user_id, mailbox_id, uid, modseq, op FROM es_outbox ORDER BY id LIMIT ?',
        [limit],
      )
    ).rows;
    if (!rows.length) return { rows: 0 };
    const result = await ship(rows, (userId, keys) => docRows(trx, userId, keys));
    await trx.raw('DELETE FROM es_outbox WHERE id = ANY(?::bigint[])', [rows.map((r) => r.id)]);
    return { ...result, rows: rows.length };
  });
}

/**
 * Waits until no drain step is running (reindex's barrier).
 * @param {import('./pg-store').PgStore} store
 */
async function outboxBarrier(store) {
  await store.knex.transaction((trx) => trx.raw('SELECT pg_advisory_xact_lock(?)', [DRAIN_LOCK]));
}

/**
 * @returns {Promise<number>} outbox rows waiting (of one user with `userId`: the bench ships
 *   only its own run's rows when other users' changes wait beside them)
 * @param {import('./pg-store').PgStore} store
 * @param {number} [userId]
 */
async function outboxPending(store, userId) {
  if (userId == null)
    return (await store.knex.raw('SELECT count(*)::int AS n FROM es_outbox')).rows[0].n;
  const r = await store.knex.raw('SELECT count(*)::int AS n FROM es_outbox WHERE user_id = ?', [
    userId,
  ]);
  return r.rows[0].n;
}

/**
 * Current mirror rows (DOC_COLUMNS) of (mailbox, uid) keys; purged keys are missing.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {Array<{mailboxId: number, uid: number}>} keys
 */
async function mirrorRows(store, userId, keys) {
  return docRows(store.knex, userId, keys);
}

/**
 * One page of a user's live messages as mirror rows in (mailbox_id, uid) order (reindex).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {{mailboxId: number, uid: number}|null} after keyset position
 * @param {number} limit
 */
async function mirrorPage(store, userId, after, limit) {
  const r = await store.knex.raw(
    `SELECT ${DOC_COLUMNS} FROM messages m
       JOIN mailboxes b ON b.id = m.mailbox_id AND b.user_id = m.user_id
      WHERE m.user_id = ? AND NOT m.expunged ${after ? 'AND (m.mailbox_id, m.uid) > (?, ?)' : ''}
      ORDER BY m.mailbox_id, m.uid LIMIT ?`,
    after ? [userId, userId, after.mailboxId, after.uid, limit] : [userId, userId, limit],
  );
  return r.rows;
}

/**
 * The (mailbox, uid) pairs that are live messages of the user, in (mailbox, uid) order: ES
 * hits resolved against PostgreSQL, so a queued expunge never shows.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {Array<[number, number]>} pairs [mailboxId, uid]
 * @returns {Promise<Array<{mailboxId: number, uid: number}>>}
 */
async function liveMessages(store, userId, pairs) {
  if (!pairs.length) return [];
  const r = await store.knex.raw(
    `SELECT m.mailbox_id, m.uid FROM messages m
       JOIN unnest(?::int[], ?::bigint[]) AS k(mailbox_id, uid)
         ON m.mailbox_id = k.mailbox_id AND m.uid = k.uid
      WHERE m.user_id = ? AND NOT m.expunged
      ORDER BY m.mailbox_id, m.uid`,
    [pairs.map((s) => s[0]), pairs.map((s) => s[1]), userId],
  );
  return r.rows.map((x) => ({ mailboxId: x.mailbox_id, uid: Number(x.uid) }));
}

/**
 * Every live message's (mailbox, uid, modseq) of a user (es verify).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @returns {Promise<Array<{mailboxId: number, uid: number, modseq: number}>>}
 */
async function messageVersions(store, userId) {
  const r = await store.knex.raw(
    'SELECT mailbox_id, uid, modseq FROM messages WHERE user_id = ? AND NOT expunged',
    [userId],
  );
  return r.rows.map((x) => ({
    mailboxId: x.mailbox_id,
    uid: Number(x.uid),
    modseq: Number(x.modseq),
  }));
}

/**
 * PostgreSQL's lexemes of query texts, as plainto_tsquery / phraseto_tsquery see them (same
 * parser, `simple` dictionary), so that ES is asked for the words pg would look up.
 * @param {import('./pg-store').PgStore} store
 * @param {string[]} texts
 * @returns {Promise<Map<string, Array<[number, string]>>>} text → (position, lexeme) pairs
 */
async function queryLexemes(store, texts) {
  if (!texts.length) return new Map();
  const r = await store.knex.raw(
    `SELECT x.t, ${lexemePairs("to_tsvector('simple', x.t)")} AS lexemes
       FROM unnest(?::text[]) AS x(t)`,
    [texts],
  );
  return new Map(r.rows.map((row) => [row.t, row.lexemes || []]));
}

/**
 * Users, in id order (all, the one named, or those of the given ids).
 * @param {import('./pg-store').PgStore} store
 * @param {{name?: string, ids?: number[]}} [opts]
 * @returns {Promise<Array<{id: number, name: string}>>}
 */
async function listUsers(store, opts = {}) {
  const q = store.knex('users').select('id', 'name').orderBy('id');
  if (opts.name) q.where({ name: opts.name });
  if (opts.ids) q.whereIn('id', opts.ids);
  return q;
}

module.exports = {
  drainOutbox,
  outboxBarrier,
  outboxPending,
  mirrorRows,
  mirrorPage,
  liveMessages,
  messageVersions,
  queryLexemes,
  listUsers,
};
