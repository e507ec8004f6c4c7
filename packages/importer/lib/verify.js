'use strict';

const crypto = require('node:crypto');
const path = require('node:path');
const { canonicalMailboxName: canonicalName } = require('@mailgate/core');
const { mboxItems, maildirItems, mhItems, mailboxForMboxFile } = require('./sources');

const BATCH = 1000;

/**
 * Checks that every message of a source is in the store and byte-identical: the store is
 * asked for each message's (sha256, occurrence) key, and the stored bytes are hashed again
 * (by PostgreSQL for a plain row, in the store after decoding for one it compressed:
 * raw-codec.js) so a damaged copy is caught, not just a missing one. An entry the
 * import could not store as a message (binary garbage, a reader error) is accounted for when
 * the import kept it byte-exact in quarantine: it counts as `quarantined`, not `missing`.
 *
 * @param {{store: object, user: string, kind: 'mbox'|'maildir'|'mh', path: string, mailbox?: string}} opts
 * @returns {Promise<{ok: boolean, messages: number, present: number, quarantined: number, missing: number, mismatched: number, unreadable: number, problems: Array<object>}>}
 */
async function verifySource(opts) {
  const { store } = opts;
  const user = await store.getUser(opts.user);
  const res = {
    ok: false,
    messages: 0,
    present: 0,
    quarantined: 0,
    missing: 0,
    mismatched: 0,
    unreadable: 0,
    problems: [],
  };
  const problem = (p) => {
    if (res.problems.length < 1000) res.problems.push(p);
  };
  const mailboxIdOf = mailboxIds(store, user.id);
  let batch = [];
  for await (const it of keyed(sourceItems(opts))) {
    res.messages++;
    batch.push(it);
    if (batch.length >= BATCH) {
      await checkBatch(store, user.id, mailboxIdOf, batch, res, problem);
      batch = [];
    }
  }
  await checkBatch(store, user.id, mailboxIdOf, batch, res, problem);
  res.ok = res.missing === 0 && res.mismatched === 0 && res.unreadable === 0;
  return res;
}

function sourceItems(opts) {
  const abs = path.resolve(opts.path);
  if (opts.kind === 'mbox')
    return mboxItems(abs, { mailbox: opts.mailbox || mailboxForMboxFile(abs) });
  return opts.kind === 'maildir' ? maildirItems(abs) : mhItems(abs);
}

/** Adds the import's identity of each entry (import.js): sha256 of its bytes, n-th occurrence. */
async function* keyed(items) {
  const occurrences = new Map();
  for await (const it of items) {
    // The stored name, as the import numbers occurrences by it (import.js splitEntries).
    if (typeof it.mailbox === 'string') it.mailbox = canonicalName(it.mailbox);
    it.hash = crypto
      .createHash('sha256')
      .update(it.raw || Buffer.alloc(0))
      .digest();
    const k = `${it.mailbox}\0${it.hash.toString('base64')}`;
    it.dup = occurrences.get(k) || 0;
    occurrences.set(k, it.dup + 1);
    it.raw = null;
    yield it;
  }
}

function mailboxIds(store, userId) {
  const ids = new Map();
  return async (name) => {
    if (!ids.has(name)) {
      const mb = await store.getMailbox(userId, name).catch((err) => {
        if (err.code === 'MAILBOX_NOT_FOUND') return null;
        throw err;
      });
      ids.set(name, mb ? mb.id : null);
    }
    return ids.get(name);
  };
}

async function checkBatch(store, userId, mailboxIdOf, batch, res, problem) {
  const byBox = new Map();
  for (const it of batch) {
    if (!byBox.has(it.mailbox)) byBox.set(it.mailbox, []);
    byBox.get(it.mailbox).push(it);
  }
  for (const [name, list] of byBox) {
    const id = await mailboxIdOf(name);
    const stored = id
      ? await store.lookupKeys(
          userId,
          id,
          list.filter((it) => !it.error),
          { checkBytes: true },
        )
      : new Map();
    const notStored = list.filter(
      (it) => it.error || !stored.has(`${it.hash.toString('hex')}:${it.dup}`),
    );
    const kept = await store.quarantinedHashes(
      userId,
      name,
      notStored.map((it) => it.hash),
    );
    for (const it of list) {
      const where = { mailbox: name, position: it.position };
      const hit = it.error ? null : stored.get(`${it.hash.toString('hex')}:${it.dup}`);
      const q = hit ? null : kept.get(it.hash.toString('hex'));
      if (hit && hit.intact) res.present++;
      else if (hit) {
        res.mismatched++;
        problem({ ...where, uid: hit.uid, problem: 'stored bytes differ' });
      } else if (q && q.intact) res.quarantined++;
      else if (q) {
        res.mismatched++;
        problem({ ...where, problem: 'quarantined bytes differ' });
      } else if (it.error) {
        res.unreadable++;
        problem({ ...where, problem: it.error });
      } else {
        res.missing++;
        problem({ ...where, problem: 'missing' });
      }
    }
  }
}

module.exports = { verifySource };
