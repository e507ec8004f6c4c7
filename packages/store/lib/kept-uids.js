'use strict';

/*
 * Caller-given UIDs for import batches: the one place that decides whether a mailbox keeps the
 * UIDVALIDITY and UIDs a source already gave its messages (an upstream IMAP folder, a Dovecot
 * `dovecot-uidlist`), so that clients which knew the source do not download everything again
 * after a migration. It never lets a uid be reused (RFC 3501 2.3.1.1): a given uid is kept only
 * when it is at or above the mailbox's UIDNEXT, and UIDNEXT moves past it in the transaction
 * that stores the message. When the uids cannot be kept (the mailbox holds messages numbered
 * otherwise, or a given uid is below UIDNEXT), the mailbox gets a new UIDVALIDITY if it had
 * taken the source's (clients that knew the source resynchronise) and uids are allocated as
 * usual. Used by import-ops.js prepareBatch/commitBatch only.
 */

const { NEW_UIDVALIDITY } = require('./mailbox-ref');

/**
 * Plans one mailbox's part of a batch. Messages name `uidValidity` (the source's) and
 * optionally `uid` (the source's uid of that message) and `uidNext` (the source's UIDNEXT: uids
 * allocated here start at or above it, so none the source had handed out is reused).
 *
 * @param {import('knex').Knex} knex
 * @param {number} userId
 * @param {number} mailboxId
 * @param {Array<{uid?: number|null, uidValidity?: number|null, uidNext?: number|null}>} fresh
 *   the batch's new messages of this mailbox, in source order
 * @returns {Promise<{keep: boolean, next?: number, allocFrom?: number}|null>} null when no
 *   message names a UIDVALIDITY; keep: the messages with a uid take it (false: the mailbox's
 *   UIDVALIDITY is not the source's, or no longer); next: UIDNEXT once they are stored (0: no
 *   kept uid); allocFrom: the lowest uid allocation may hand out
 */
async function planKeptUids(knex, userId, mailboxId, fresh) {
  const first = fresh.find((it) => it.uidValidity != null);
  if (!first) return null;
  const validity = Number(first.uidValidity);
  // Adopt the source's UIDVALIDITY only on a mailbox that never allocated a uid (uidnext 1):
  // no client can have seen a message in it.
  await knex.raw(
    `UPDATE mailboxes SET uidvalidity = ?
      WHERE id = ? AND user_id = ? AND uidnext = 1 AND uidvalidity <> ?`,
    [validity, mailboxId, userId, validity],
  );
  const mb = await knex('mailboxes')
    .where({ id: mailboxId, user_id: userId })
    .first('uidvalidity', 'uidnext');
  if (Number(mb.uidvalidity) !== validity) return { keep: false };
  const given = fresh.filter((it) => it.uid != null).map((it) => Number(it.uid));
  let ok = true;
  let prev = Number(mb.uidnext) - 1;
  for (const uid of given) {
    // Strictly ascending, at or above UIDNEXT, within IMAP's 32-bit range.
    if (!Number.isInteger(uid) || uid <= prev || uid > 0xffffffff) ok = false;
    prev = uid;
  }
  if (!ok) {
    // A fresh value of the store's own sequence, like every created mailbox (mailbox-ref.js).
    await knex.raw(
      `UPDATE mailboxes
          SET uidvalidity = ${NEW_UIDVALIDITY}
        WHERE id = ? AND user_id = ? AND uidvalidity = ?`,
      [mailboxId, userId, validity],
    );
    return { keep: false };
  }
  // UIDNEXT passes the kept uids when they commit, and no further: the batches after this one
  // (loading now, or after a resume) still hold higher source uids. The source's own UIDNEXT
  // bounds only allocation here, and is applied once the source is read (raiseKeptUidNext).
  const next = given.length ? given[given.length - 1] + 1 : 0;
  let allocFrom = next;
  for (const it of fresh)
    if (it.uidNext != null) allocFrom = Math.max(allocFrom, Number(it.uidNext));
  return { keep: true, next, allocFrom };
}

module.exports = { planKeptUids };
