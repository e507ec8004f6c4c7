'use strict';

/*
 * The backfill of IMAP metadata (`message_imap`) for mail stored before it was derived at
 * import (migrations/20261129350100_message_imap.js): the messages without it are read in
 * batches with their bytes, derived here (@mailgate/mime imap-meta.js, as deriveRow does at
 * import) and written. Resumable: each batch commits on its own and a run picks up whatever is
 * still missing, so a killed backfill continues where it stopped. Never changes a message
 * (no modseq, no outbox row): the metadata is a function of bytes that never change.
 */

const { deriveMeta, hasNul } = require('@mailgate/mime/imap-meta');

/**
 * Backfills one user's IMAP metadata, or every user's.
 * @param {{store: object, user?: string, batch?: number}} opts
 * @returns {Promise<{users: number, messages: number, kept: number, skipped: number}>}
 *   skipped: messages whose metadata holds NUL (served derived on the spot)
 */
async function backfillImapMeta(opts) {
  const { store } = opts;
  const limit = opts.batch || 500;
  const users = opts.user
    ? [await store.getUser(opts.user)]
    : (await store.listUsers()).map((u) => ({ id: u.id, name: u.name }));
  const report = { users: 0, messages: 0, kept: 0, skipped: 0 };
  for (const user of users) {
    report.users++;
    let after = null;
    for (;;) {
      const batch = await store.messagesWithoutImapMeta(user.id, { limit, after });
      if (!batch.length) break;
      const rows = [];
      for (const m of batch) {
        const meta = deriveMeta(m.raw);
        if (hasNul(meta)) report.skipped++;
        else rows.push({ mailboxId: m.mailboxId, uid: m.uid, ...meta });
      }
      report.messages += batch.length;
      report.kept += await store.putImapMeta(user.id, rows);
      const last = batch[batch.length - 1];
      after = { mailboxId: last.mailboxId, uid: last.uid };
    }
  }
  return report;
}

module.exports = { backfillImapMeta };
