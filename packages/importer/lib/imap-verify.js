'use strict';

const { upstreamFolders } = require('./imap-source');

/*
 * Verification of an `import imap` against the upstream account, per folder: every upstream
 * message (UID FETCH 1:* RFC822.SIZE) must be stored from that folder generation (same
 * UIDVALIDITY) with the same size, and the counts and bytes of both sides are reported. It
 * reads upstream read-only (EXAMINE) and writes nothing. `mailgate migrate` flips a user's
 * route only when every folder verifies.
 */

/**
 * @param {object} opts
 * @param {import('@mailgate/store').PgStore} opts.store
 * @param {number} opts.userId
 * @param {{host: string, port: number, login: string, passwordEnv?: string, password?: string, security?: string}} opts.imap
 * @returns {Promise<{ok: boolean, mailboxes: Array<{folder: string, mailbox: string,
 *   uidValidity: number, upstream: {messages: number, bytes: number},
 *   local: {messages: number, bytes: number}, missing: number, differing: number,
 *   uidsKept: boolean, ok: boolean}>}>}
 */
async function verifyImap(opts) {
  const { store, userId } = opts;
  const mailboxes = [];
  for await (const { client, box, mailbox } of upstreamFolders(opts.imap)) {
    const uidValidity = String(client.mailbox.uidValidity);
    const up = new Map();
    if (client.mailbox.exists) {
      for await (const m of client.fetch('1:*', { uid: true, size: true }, { uid: true })) {
        up.set(m.uid, m.size);
      }
    }
    const mb = await store.ensureMailbox(userId, mailbox);
    const mine = await store.importedImapSizes(userId, mb.id, box.path, uidValidity);
    let missing = 0;
    let differing = 0;
    let uidsKept = Number(mb.uidvalidity) === Number(uidValidity);
    const sum = (it) => [...it].reduce((a, b) => a + b, 0);
    for (const [imapUid, size] of up) {
      const got = mine.get(imapUid);
      if (!got) missing++;
      else {
        if (got.size !== size) differing++;
        if (got.uid !== imapUid) uidsKept = false;
      }
    }
    const entry = {
      folder: box.path,
      mailbox,
      uidValidity: Number(uidValidity),
      upstream: { messages: up.size, bytes: sum(up.values()) },
      local: { messages: mine.size, bytes: sum([...mine.values()].map((v) => v.size)) },
      missing,
      differing,
      uidsKept,
    };
    entry.ok =
      missing === 0 &&
      differing === 0 &&
      entry.local.messages === entry.upstream.messages &&
      entry.local.bytes === entry.upstream.bytes;
    mailboxes.push(entry);
  }
  return { ok: mailboxes.every((m) => m.ok), mailboxes };
}

module.exports = { verifyImap };
