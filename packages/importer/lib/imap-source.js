'use strict';

const { connect } = require('@mailgate/legacy');
const { splitFlags } = require('@mailgate/readers');

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
 * `UID FETCH 1:max (FLAGS)` through the store's flag change (replaceFlags: mailbox lock, new
 * modseq, es_outbox rows, so the Elasticsearch mirror follows).
 * Messages keep their upstream UID, and the mailbox the upstream UIDVALIDITY, when the mailbox
 * was empty or already numbered that way (the store's kept-uids.js decides; otherwise a new
 * UIDVALIDITY and the report warns UIDS_NOT_KEPT): clients that knew the upstream server (or
 * read it through the migration proxy) keep their caches after cutover.
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
 * Mailbox name for an upstream folder: INBOX, the special-use name the server declared, else
 * the folder path with the server's hierarchy delimiter made `/`. A special use imapflow only
 * guessed from the name (`specialUseSource: 'name'`, a server without SPECIAL-USE) renames
 * nothing: a user's own folder `archives` stays `archives` (it became `Archive`, so after a
 * migration's cutover the client saw its folder gone and another one in its place).
 * @param {{path: string, delimiter: string|null, specialUse?: string, specialUseSource?: string}} box
 */
function mailboxForFolder(box) {
  if (box.path.toUpperCase() === 'INBOX') return 'INBOX';
  const declared = box.specialUse && box.specialUseSource !== 'name';
  if (declared && SPECIAL_USE_NAMES[box.specialUse]) return SPECIAL_USE_NAMES[box.specialUse];
  return box.delimiter && box.delimiter !== '/'
    ? box.path.split(box.delimiter).join('/')
    : box.path;
}

/**
 * Plans of an IMAP import: `{source, mailboxKey, totalCount, items}` per folder, as
 * planSources() yields for files.
 * @param {object} opts runImport options: imap {host, port, login, passwordEnv|password, security}, store, userId, log, progress
 */
async function* imapPlans(opts) {
  const { store, userId } = opts;
  const acct = opts.imap;
  for await (const { client, box, mailbox } of upstreamFolders(acct)) {
    const uidValidity = String(client.mailbox.uidValidity);
    const uidNext = Number(client.mailbox.uidNext) || null;
    const mb = await store.ensureMailbox(userId, mailbox);
    const imported = await store.importedImapUids(userId, mb.id, box.path, uidValidity);
    let maxUid = 0;
    for (const u of imported.keys()) if (u > maxUid) maxUid = u;
    let flagUpdates = 0;
    const upstream = new Map();
    if (maxUid > 0 && client.mailbox.exists) {
      for await (const m of client.fetch(
        `1:${maxUid}`,
        { uid: true, flags: true },
        { uid: true },
      )) {
        upstream.set(m.uid, splitFlags(m.flags || []));
      }
      flagUpdates = await syncFlags(store, userId, mb.id, imported, upstream);
    }
    // A migration mirrors what the user deleted upstream (through the proxy) since the
    // last run: those messages are expunged here too, or they would come back at cutover.
    let expunged = 0;
    if (opts.mirrorExpunges && imported.size) {
      expunged = await mirrorExpunges(store, userId, mb.id, imported, upstream);
    }
    const fresh = client.mailbox.exists
      ? ((await client.search({ uid: `${maxUid + 1}:*` }, { uid: true })) || []).filter(
          (u) => u > maxUid,
        )
      : [];
    if (opts.progress !== false) {
      process.stderr.write(
        `import imap: ${box.path} → ${mailbox}: ${fresh.length} new, ${flagUpdates} flag updates` +
          (opts.mirrorExpunges ? `, ${expunged} expunged\n` : '\n'),
      );
    }
    opts.log?.info(
      { folder: box.path, mailbox, fresh: fresh.length, flagUpdates, expunged },
      'imap folder',
    );
    const source = `imap://${encodeURIComponent(acct.login)}@${acct.host}:${acct.port}/${encodeURIComponent(box.path)};UIDVALIDITY=${uidValidity}`;
    yield {
      source,
      mailboxKey: mailbox,
      totalCount: fresh.length,
      flagUpdates,
      items: fetchItems(client, box.path, mailbox, uidValidity, fresh, uidNext),
    };
    // After the folder's messages: a mailbox still numbered as upstream never hands out a
    // uid upstream already used, even when nothing new came (kept-uids in the store).
    // Its HIGHESTMODSEQ too (imapflow ENABLEs CONDSTORE when offered): later changes here
    // get modseqs above the ones a client synced upstream (CONDSTORE/QRESYNC resync).
    const hms = client.mailbox.highestModseq;
    if (uidNext || hms) {
      await store.raiseKeptUidNext(userId, mb.id, Number(uidValidity), uidNext || 0, hms);
    }
  }
}

/**
 * The selectable folders of an upstream account, one at a time, each opened read-only
 * (EXAMINE) under imapflow's mailbox lock: yields `{client, box, mailbox}` while the lock is
 * held (the caller reads `client.mailbox`), releases it when the caller asks for the next one,
 * and logs out after the last one or when the caller stops early or throws.
 * @param {object} account {host, port, login, passwordEnv|password, security}
 */
async function* upstreamFolders(account) {
  const client = await connect(account);
  try {
    const folders = (await client.list()).filter(
      (b) => !b.flags.has('\\Noselect') && wantedFolder(account.folders, b.path),
    );
    for (const box of folders) {
      const lock = await client.getMailboxLock(box.path, { readOnly: true });
      try {
        yield { client, box, mailbox: mailboxForFolder(box) };
      } finally {
        lock.release();
      }
    }
  } finally {
    await client.logout().catch(() => client.close());
  }
}

/**
 * Whether a folder is in an account's folder filter (`--accounts` files, issue 33): no filter
 * takes every folder; an entry matches its folder exactly (INBOX in any case) or, ending in
 * `*`, every folder starting with what precedes it.
 * @param {string[]|null|undefined} filter
 * @param {string} folder
 */
function wantedFolder(filter, folder) {
  if (!filter || !filter.length) return true;
  return filter.some((f) =>
    f.endsWith('*')
      ? folder.startsWith(f.slice(0, -1))
      : f === folder || (f.toUpperCase() === 'INBOX' && folder.toUpperCase() === 'INBOX'),
  );
}

async function* fetchItems(client, folder, mailbox, uidValidity, uids, uidNext) {
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
      const { flags, keywords } = splitFlags(m.flags || []);
      yield {
        index: m.uid,
        mailbox,
        raw: m.source,
        position: `uid ${m.uid}`,
        internalDate: m.internalDate ? new Date(m.internalDate) : null,
        flags,
        keywords,
        sourceName: null,
        // Upstream numbering, kept by the store where it can (RFC 3501 2.3.1.1).
        uid: m.uid,
        uidValidity: Number(uidValidity),
        uidNext,
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

/**
 * Applies upstream flags to the imported messages whose flags differ (store.replaceFlags:
 * the same path as any flag change, so modseq and the ES outbox follow).
 * @param {import('@mailgate/store').PgStore} store
 * @param {number} userId
 * @param {number} mailboxId
 * @param {Map<number, number>} imported upstream UID → local uid
 * @param {Map<number, {flags: string[], keywords: string[]}>} upstream by upstream UID
 * @returns {Promise<number>} messages updated
 */
async function syncFlags(store, userId, mailboxId, imported, upstream) {
  const wanted = [];
  for (const [imapUid, f] of upstream) {
    const uid = imported.get(imapUid);
    if (uid != null) wanted.push({ uid, flags: f.flags, keywords: f.keywords });
  }
  const r = await store.replaceFlags(userId, mailboxId, wanted);
  return r.changed.length;
}

/**
 * Expunges the imported messages whose upstream UID is gone (`mailgate migrate`).
 * @param {import('@mailgate/store').PgStore} store
 * @param {number} userId
 * @param {number} mailboxId
 * @param {Map<number, number>} imported upstream UID → local uid
 * @param {Map<number, object>} upstream upstream UIDs present now (1:max)
 * @returns {Promise<number>} messages expunged
 */
async function mirrorExpunges(store, userId, mailboxId, imported, upstream) {
  const gone = [];
  for (const [imapUid, uid] of imported) if (!upstream.has(imapUid)) gone.push(uid);
  if (!gone.length) return 0;
  const r = await store.expunge(userId, mailboxId, { uids: gone, force: true });
  return r.expunged.length;
}

module.exports = { imapPlans, upstreamFolders, mailboxForFolder, syncFlags, wantedFolder };
