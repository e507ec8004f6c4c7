'use strict';

const { lockMailbox, recordChange } = require('./mail-ops');

/*
 * Store queries of the import pipeline beyond batch writes (pg-store.js): what verify and the
 * `import imap` source ask about what an earlier import kept, and the refresh of flags from
 * an upstream server. Plain functions taking the store first
 * (PgStore's methods of the same names call them). As everywhere in the store,
 * every query filters on user_id and binds values; a flag change takes the mailbox row lock,
 * stamps a new modseq (RFC 7162) and queues es_outbox rows, like setFlags.
 */

/**
 * Which of the given content hashes an import kept in quarantine for a mailbox, and whether
 * the kept bytes still hash to them (PostgreSQL re-hashes: a damaged copy is caught).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {string} mailbox mailbox name the entry was headed for
 * @param {Buffer[]} hashes sha256 of the source entries
 * @returns {Promise<Map<string, {intact: boolean}>>} keyed by hex hash
 */
async function quarantinedHashes(store, userId, mailbox, hashes) {
  const out = new Map();
  if (!hashes.length) return out;
  const r = await store.knex.raw(
    `SELECT q.content_hash, bool_or(sha256(q.raw) = q.content_hash) AS intact
       FROM quarantine q
      WHERE q.user_id = ? AND q.mailbox IS NOT DISTINCT FROM ?
        AND q.content_hash = ANY(?::bytea[])
      GROUP BY q.content_hash`,
    [userId, mailbox, hashes],
  );
  for (const row of r.rows) out.set(row.content_hash.toString('hex'), { intact: row.intact });
  return out;
}

/**
 * Messages an `import imap` stored from one upstream folder, by upstream UID (kept in
 * message_sources.source_meta: {imapUid, imapUidValidity, folder}).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number} mailboxId
 * @param {string} folder upstream folder path
 * @param {string} uidValidity upstream UIDVALIDITY (other values: another folder generation)
 * @returns {Promise<Map<number, number>>} upstream UID → local uid (expunged but not yet
 *   purged ones included: they are not fetched again)
 */
async function importedImapUids(store, userId, mailboxId, folder, uidValidity) {
  const r = await store.knex.raw(
    `SELECT (s.source_meta->>'imapUid')::bigint AS imap_uid, s.uid
       FROM message_sources s
      WHERE s.user_id = ? AND s.mailbox_id = ? AND s.source_meta->>'folder' = ?
        AND s.source_meta->>'imapUidValidity' = ?`,
    [userId, mailboxId, folder, String(uidValidity)],
  );
  return new Map(r.rows.map((row) => [Number(row.imap_uid), Number(row.uid)]));
}

/**
 * Sizes of the live (not expunged) messages an `import imap` stored from one upstream
 * folder generation, by upstream UID: what `mailgate migrate` verifies against the upstream
 * RFC822.SIZEs.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number} mailboxId
 * @param {string} folder upstream folder path
 * @param {string} uidValidity upstream UIDVALIDITY
 * @returns {Promise<Map<number, {uid: number, size: number}>>}
 */
async function importedImapSizes(store, userId, mailboxId, folder, uidValidity) {
  const r = await store.knex.raw(
    `SELECT (s.source_meta->>'imapUid')::bigint AS imap_uid, m.uid, m.size
       FROM message_sources s
       JOIN messages m ON m.user_id = s.user_id AND m.mailbox_id = s.mailbox_id AND m.uid = s.uid
      WHERE s.user_id = ? AND s.mailbox_id = ? AND s.source_meta->>'folder' = ?
        AND s.source_meta->>'imapUidValidity' = ? AND NOT m.expunged`,
    [userId, mailboxId, folder, String(uidValidity)],
  );
  return new Map(
    r.rows.map((row) => [Number(row.imap_uid), { uid: Number(row.uid), size: row.size }]),
  );
}

/**
 * Raises a mailbox's UIDNEXT to the source's, when the mailbox still carries the source's
 * UIDVALIDITY (kept-uids.js): a uid the source already handed out (to a message since
 * expunged there) is never handed out again here (RFC 3501 2.3.1.1).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number} mailboxId
 * @param {number} uidValidity the source's
 * @param {number} uidNext the source's (0: none)
 * @param {string|number|null} [highestModseq] the source's HIGHESTMODSEQ (RFC 7162), when it
 *   has one: HIGHESTMODSEQ is raised to it too, so that a client which synced the source and
 *   resynchronises here with that modseq (CONDSTORE CHANGEDSINCE, QRESYNC) after the
 *   cutover is told about every later change (their modseqs are above it)
 * @returns {Promise<boolean>} whether the mailbox is numbered as the source
 */
async function raiseKeptUidNext(
  store,
  userId,
  mailboxId,
  uidValidity,
  uidNext,
  highestModseq = null,
) {
  const r = await store.knex.raw(
    `UPDATE mailboxes SET uidnext = GREATEST(uidnext, ?),
            highestmodseq = GREATEST(highestmodseq, COALESCE(?::bigint, 0))
      WHERE id = ? AND user_id = ? AND uidvalidity = ? RETURNING id`,
    [uidNext, highestModseq == null ? null : String(highestModseq), mailboxId, userId, uidValidity],
  );
  return r.rows.length > 0;
}

/**
 * Sets messages' flags and keywords to the given lists (IMAP `STORE FLAGS`, not +FLAGS):
 * `import imap` refreshing flags changed upstream. Only messages whose flags differ change;
 * they get one new modseq and an es_outbox row, in one transaction under the mailbox lock.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number} mailboxId
 * @param {Array<{uid: number, flags: string[], keywords: string[]}>} wanted
 * @returns {Promise<{changed: Array<{uid: number, flags: string[], keywords: string[], modseq: number}>, highestModseq: number|null}>}
 *   highestModseq: null when nothing was asked
 */
async function replaceFlags(store, userId, mailboxId, wanted) {
  if (!wanted.length) return { changed: [], highestModseq: null };
  const rows = wanted.map((w) => ({
    uid: Number(w.uid),
    flags: [...new Set(w.flags)].sort(),
    keywords: [...new Set(w.keywords)].sort(),
  }));
  return store.knex.transaction(async (trx) => {
    const mb = await lockMailbox(trx, userId, mailboxId);
    const modseq = Number(mb.highestmodseq) + 1;
    const r = await trx.raw(
      `UPDATE messages m SET flags = w.flags, keywords = w.keywords, modseq = ?
         FROM jsonb_to_recordset(?::jsonb) AS w(uid bigint, flags text[], keywords text[])
        WHERE m.user_id = ? AND m.mailbox_id = ? AND m.uid = w.uid AND NOT m.expunged
          AND NOT (m.flags @> w.flags AND w.flags @> m.flags
                   AND m.keywords @> w.keywords AND w.keywords @> m.keywords)
        RETURNING m.uid, m.flags, m.keywords, m.modseq`,
      [modseq, JSON.stringify(rows), userId, mailboxId],
    );
    const changed = r.rows
      .map((c) => ({ uid: Number(c.uid), flags: c.flags, keywords: c.keywords, modseq }))
      .sort((a, b) => a.uid - b.uid);
    if (!changed.length) return { changed, highestModseq: Number(mb.highestmodseq) };
    const uids = changed.map((c) => c.uid);
    await recordChange(store, trx, userId, mailboxId, uids, modseq);
    return { changed, highestModseq: modseq };
  });
}

module.exports = {
  quarantinedHashes,
  importedImapUids,
  importedImapSizes,
  raiseKeptUidNext,
  replaceFlags,
};
