'use strict';

/*
 * The IMAP metadata columns of messages (see migrations/20261123151000_imap_meta.js): read in
 * one query for a set of uids, written in one statement for a batch. Writing them is not a
 * change of the message (no modseq, no outbox row): they are derived from bytes that never
 * change, so a reader that saw NULL and one that sees the value agree.
 */

const { inMailbox, mustExist, isName, mailboxWhere } = require('./mailbox-ref');

/**
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number|{name: string}} mailbox id, or byName(name) (MAILBOX_NOT_FOUND when none)
 * @param {number[]} uids
 * @returns {Promise<Map<number, {envelope: string, body: string, bodystructure: string, fields: string, size: number}>>}
 *   only the uids whose metadata is stored (metadata kept before imap_size existed is not)
 */
async function getImapMeta(store, userId, mailbox, uids) {
  const out = new Map();
  if (!uids.length && !isName(mailbox)) return out;
  const { mailbox: mb, rows } = await inMailbox(
    store.knex,
    userId,
    mailbox,
    `SELECT m.uid, m.imap_envelope, m.imap_body, m.imap_bodystructure, m.imap_fields,
            m.imap_size
       FROM messages m
      WHERE m.user_id = ? AND m.mailbox_id = b.id AND m.uid = ANY(?::bigint[])
        AND m.imap_envelope IS NOT NULL AND m.imap_size IS NOT NULL AND NOT m.expunged`,
    [userId, uids],
  );
  mustExist(mailbox, mb);
  for (const x of rows) {
    out.set(Number(x.uid), {
      envelope: x.imap_envelope,
      body: x.imap_body,
      bodystructure: x.imap_bodystructure,
      fields: x.imap_fields,
      size: Number(x.imap_size),
    });
  }
  return out;
}

/**
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number|{name: string}} mailbox id, or byName(name) (MAILBOX_NOT_FOUND when none)
 * @param {Array<{uid: number, envelope: string, body: string, bodystructure: string, fields: string, size: number}>} list
 */
async function putImapMeta(store, userId, mailbox, list) {
  if (!list.length && !isName(mailbox)) return;
  const w = mailboxWhere(mailbox);
  // The mailbox resolved by the update's own statement; `found` tells a missing one.
  const r = await store.knex.raw(
    `WITH b AS (SELECT b.id FROM mailboxes b WHERE b.user_id = ? AND ${w.sql}),
          u AS (
            UPDATE messages m
               SET imap_envelope = v.envelope, imap_body = v.body,
                   imap_bodystructure = v.bodystructure, imap_fields = v.fields,
                   imap_size = v.size
              FROM b, unnest(?::bigint[], ?::text[], ?::text[], ?::text[], ?::text[], ?::int[])
                   AS v(uid, envelope, body, bodystructure, fields, size)
             WHERE m.user_id = ? AND m.mailbox_id = b.id AND m.uid = v.uid
            RETURNING 1)
     SELECT (SELECT count(*) FROM b)::int AS found, (SELECT count(*) FROM u)::int AS updated`,
    [
      userId,
      w.value,
      list.map((x) => x.uid),
      list.map((x) => x.envelope),
      list.map((x) => x.body),
      list.map((x) => x.bodystructure),
      list.map((x) => x.fields),
      list.map((x) => x.size),
      userId,
    ],
  );
  if (!r.rows[0].found) {
    mustExist(mailbox, null);
    return;
  }
  if (!list.length) return;
  // Rows that grew past their page's free space were updated out of place (not HOT): their
  // trigram and tsvector entries went to the GIN pending lists, which every substring search
  // then scans (~190 ms per search on 21k messages after a first sync, until autovacuum).
  // Merged now, once per batch kept: the first sync pays it, the searches after do not.
  await store.cleanGinPending(userId);
}

module.exports = { getImapMeta, putImapMeta };
