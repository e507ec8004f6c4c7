'use strict';

const crypto = require('node:crypto');
const path = require('node:path');
const { mboxItems, maildirItems, mhItems, mailboxForMboxFile } = require('./sources');

/**
 * Checks that every message of a source is in the store and byte-identical: the store is
 * asked for each message's (sha256, occurrence) key, and PostgreSQL re-hashes the stored
 * bytes (sha256(raw)) so a damaged copy is caught, not just a missing one.
 *
 * @param {{store: object, user: string, kind: 'mbox'|'maildir'|'mh', path: string, mailbox?: string}} opts
 * @returns {Promise<{ok: boolean, messages: number, present: number, missing: number, mismatched: number, unreadable: number, problems: Array<object>}>}
 */
async function verifySource(opts) {
  const { store } = opts;
  const user = await store.getUser(opts.user);
  const abs = path.resolve(opts.path);
  let items;
  if (opts.kind === 'mbox') {
    items = mboxItems(abs, { mailbox: opts.mailbox || mailboxForMboxFile(abs) });
  } else if (opts.kind === 'maildir') {
    items = maildirItems(abs);
  } else {
    items = mhItems(abs);
  }
  const res = {
    ok: false,
    messages: 0,
    present: 0,
    missing: 0,
    mismatched: 0,
    unreadable: 0,
    problems: [],
  };
  const problem = (p) => {
    if (res.problems.length < 1000) res.problems.push(p);
  };
  const mailboxIds = new Map();
  const occurrences = new Map();
  let batch = [];

  const check = async () => {
    const byBox = new Map();
    for (const it of batch) {
      if (!byBox.has(it.mailbox)) byBox.set(it.mailbox, []);
      byBox.get(it.mailbox).push(it);
    }
    for (const [name, list] of byBox) {
      if (!mailboxIds.has(name)) {
        const mb = await store.knex('mailboxes').where({ user_id: user.id, name }).first();
        mailboxIds.set(name, mb ? mb.id : null);
      }
      const id = mailboxIds.get(name);
      const found = id
        ? await store.lookupKeys(user.id, id, list, { checkBytes: true })
        : new Map();
      for (const it of list) {
        const hit = found.get(`${it.hash.toString('hex')}:${it.dup}`);
        if (!hit) {
          res.missing++;
          problem({ mailbox: name, position: it.position, problem: 'missing' });
        } else if (!hit.intact) {
          res.mismatched++;
          problem({
            mailbox: name,
            position: it.position,
            uid: hit.uid,
            problem: 'stored bytes differ',
          });
        } else res.present++;
      }
    }
    batch = [];
  };

  for await (const it of items) {
    res.messages++;
    if (it.error) {
      res.unreadable++;
      problem({ mailbox: it.mailbox, position: it.position, problem: it.error });
      continue;
    }
    it.hash = crypto.createHash('sha256').update(it.raw).digest();
    const k = `${it.mailbox}\0${it.hash.toString('base64')}`;
    it.dup = occurrences.get(k) || 0;
    occurrences.set(k, it.dup + 1);
    it.raw = null;
    batch.push(it);
    if (batch.length >= 1000) await check();
  }
  await check();
  res.ok = res.missing === 0 && res.mismatched === 0 && res.unreadable === 0;
  return res;
}

module.exports = { verifySource };
