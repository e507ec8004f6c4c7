'use strict';

const { connect, splitFetchedFlags } = require('@mailgate/legacy/lib/imap');

/*
 * The `import imap` source: one plan per upstream folder, fed into the same runImport
 * pipeline as files. What makes re-runs incremental and resumable is the IMAP identity kept
 * with every message in message_sources.source_meta: {imapUid, imapUidValidity, folder}.
 * UIDs are strictly ascending per folder while UIDVALIDITY stays the same (RFC 3501
 * 2.3.1.1), so a run fetches only `UID FETCH max+1:*` — after a kill, after new mail, or on
 * an unchanged folder (then nothing). The pipeline's index is the UID, so its checkpoint is
 * "next UID" too. The message's dedup key is (mailbox, sha256, upstream UID) rather than the
 * n-th occurrence of the bytes, so identical messages delivered twice stay two messages.
 * Before the new mail, the flags of already-imported messages are refreshed from a
 * `UID FETCH 1:max (FLAGS)` and changed ones are updated with a new modseq.
 */

// RFC 6154 special-use attribute → mailgate's canonical mailbox name.
const SPECIAL_USE_NAMES = {
  '\\Sent': 'Sent',
  '\\Drafts': 'Drafts',
  '\\Trash': 'Trash',
  '\\Junk': 'Junk',
  '\\Archive': 'Archive',
};

/**
 * Mailbox name for an upstream folder: INBOX, the special-use name, else the folder path
 * with the server's hierarchy delimiter made `/`.
 * @param {{path: string, delimiter: string|null, specialUse?: string}} box
 */
function mailboxForFolder(box) {
  if (box.path.toUpperCase() === 'INBOX') return 'INBOX';
  if (box.specialUse && SPECIAL_USE_NAMES[box.specialUse]) return SPECIAL_USE_NAMES[box.specialUse];
  return box.delimiter && box.delimiter !== '/'
    ? box.path.split(box.delimiter).join('/')
    : box.path;
}

/**
 * Plans of an IMAP import: `{source, mailboxKey, totalCount, items}` per folder, as
 * planSources() yields for files.
 * @param {object} opts runImport options: imap {host, port, login, passwordEnv|password, tls}, store, userId, log, progress
 */
async function* imapPlans(opts) {
  const { store, userId } = opts;
  const acct = opts.imap;
  const client = await connect(acct);
  try {
    const folders = (await client.list()).filter((b) => !b.flags.has('\\Noselect'));
    for (const box of folders) {
      const mailbox = mailboxForFolder(box);
      const lock = await client.getMailboxLock(box.path, { readOnly: true });
      try {
        const uidValidity = String(client.mailbox.uidValidity);
        const mb = await store.ensureMailbox(userId, mailbox);
        const maxUid = await storedMaxUid(store.knex, userId, mb.id, box.path, uidValidity);
        let flagUpdates = 0;
        if (maxUid > 0 && client.mailbox.exists) {
          const upstream = new Map();
          for await (const m of client.fetch(
            `1:${maxUid}`,
            { uid: true, flags: true },
            { uid: true },
          )) {
            upstream.set(m.uid, splitFetchedFlags(m.flags));
          }
          flagUpdates = await syncFlags(store.knex, userId, mb.id, box.path, uidValidity, upstream);
        }
        const fresh = client.mailbox.exists
          ? ((await client.search({ uid: `${maxUid + 1}:*` }, { uid: true })) || []).filter(
              (u) => u > maxUid,
            )
          : [];
        if (opts.progress !== false) {
          process.stderr.write(
            `import imap: ${box.path} → ${mailbox}: ${fresh.length} new, ${flagUpdates} flag updates\n`,
          );
        }
        opts.log?.info(
          { folder: box.path, mailbox, fresh: fresh.length, flagUpdates },
          'imap folder',
        );
        const source = `imap://${encodeURIComponent(acct.login)}@${acct.host}:${acct.port}/${encodeURIComponent(box.path)};UIDVALIDITY=${uidValidity}`;
        yield {
          source,
          mailboxKey: mailbox,
          totalCount: fresh.length,
          flagUpdates,
          items: fetchItems(client, box.path, mailbox, uidValidity, fresh),
        };
      } finally {
        lock.release();
      }
    }
  } finally {
    await client.logout().catch(() => client.close());
  }
}

async function* fetchItems(client, folder, mailbox, uidValidity, uids) {
  if (!uids.length) return;
  // Ranges of a few hundred uids: one FETCH per range keeps memory bounded by the range.
  for (let i = 0; i < uids.length; i += 200) {
    const part = uids.slice(i, i + 200);
    const got = [];
    for await (const m of client.fetch(
      part.join(','),
      { uid: true, flags: true, internalDate: true, source: true },
      { uid: true },
    )) {
      got.push(m);
    }
    got.sort((a, b) => a.uid - b.uid);
    for (const m of got) {
      const { flags, keywords } = splitFetchedFlags(m.flags);
      yield {
        index: m.uid,
        mailbox,
        raw: m.source,
        position: `uid ${m.uid}`,
        internalDate: m.internalDate ? new Date(m.internalDate) : null,
        flags,
        keywords,
        sourceName: null,
        // int4 column: UIDs beyond it fall back to counting occurrences.
        dup: m.uid <= 0x7fffffff ? m.uid : undefined,
        source: {
          source_meta: JSON.stringify({ imapUid: m.uid, imapUidValidity: uidValidity, folder }),
        },
        error: null,
      };
    }
  }
}

async function storedMaxUid(knex, userId, mailboxId, folder, uidValidity) {
  const r = await knex.raw(
    `SELECT max((s.source_meta->>'imapUid')::bigint) AS max FROM message_sources s
      WHERE s.user_id = ? AND s.mailbox_id = ? AND s.source_meta->>'folder' = ?
        AND s.source_meta->>'imapUidValidity' = ?`,
    [userId, mailboxId, folder, uidValidity],
  );
  return Number(r.rows[0].max || 0);
}

/**
 * Applies upstream flags to imported messages whose flags differ, under the mailbox row lock,
 * stamping them with a new modseq (RFC 7162) like any flag change.
 * @returns {Promise<number>} messages updated
 */
async function syncFlags(knex, userId, mailboxId, folder, uidValidity, upstream) {
  if (!upstream.size) return 0;
  const uids = [...upstream.keys()];
  const flags = uids.map((u) => `{${upstream.get(u).flags.map(pgQuote).join(',')}}`);
  const keywords = uids.map((u) => `{${upstream.get(u).keywords.map(pgQuote).join(',')}}`);
  return knex.transaction(async (trx) => {
    const mb = (
      await trx.raw('SELECT highestmodseq FROM mailboxes WHERE id = ? AND user_id = ? FOR UPDATE', [
        mailboxId,
        userId,
      ])
    ).rows[0];
    const modseq = Number(mb.highestmodseq) + 1;
    const r = await trx.raw(
      `WITH up AS (
         SELECT u.uid, u.flags::text[] AS flags, u.keywords::text[] AS keywords
           FROM unnest(?::bigint[], ?::text[], ?::text[]) AS u(uid, flags, keywords)
       ), target AS (
         SELECT s.uid AS local_uid, up.flags, up.keywords FROM message_sources s
           JOIN up ON (s.source_meta->>'imapUid')::bigint = up.uid
          WHERE s.user_id = ? AND s.mailbox_id = ? AND s.source_meta->>'folder' = ?
            AND s.source_meta->>'imapUidValidity' = ?
       )
       UPDATE messages m SET flags = t.flags, keywords = t.keywords, modseq = ?
         FROM target t
        WHERE m.user_id = ? AND m.mailbox_id = ? AND m.uid = t.local_uid AND NOT m.expunged
          AND NOT (m.flags @> t.flags AND t.flags @> m.flags
                   AND m.keywords @> t.keywords AND t.keywords @> m.keywords)
       RETURNING m.uid`,
      [uids, flags, keywords, userId, mailboxId, folder, uidValidity, modseq, userId, mailboxId],
    );
    if (r.rows.length) {
      await trx.raw('UPDATE mailboxes SET highestmodseq = ? WHERE id = ? AND user_id = ?', [
        modseq,
        mailboxId,
        userId,
      ]);
    }
    return r.rows.length;
  });
}

// A PostgreSQL array literal element, quoted (flags contain backslashes).
function pgQuote(s) {
  return `"${s.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

module.exports = { imapPlans, mailboxForFolder, syncFlags };
