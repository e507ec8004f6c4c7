'use strict';

const fsp = require('node:fs/promises');
const path = require('node:path');
const { errors } = require('@mailgate/core');
const {
  readMaildir,
  formatMaildirName,
  hasInfoLetter,
  findMaildirs,
} = require('@mailgate/readers');
const { FileBackend } = require('./file-backend');
const { splitFlags } = require('@mailgate/readers');
const { applyChange, sameSet } = require('./message');

/*
 * The direct Maildir backend: one file per message, read with the readers' readMaildir (so
 * Maildir++ folders, `:2,` flags, dovecot-keywords and Dovecot's control files are handled
 * exactly as on import). UIDs are positions in readMaildir's order (dovecot-uidlist order,
 * then delivery time), 1-based per mailbox, stable until the next expunge or delivery — we do
 * not maintain dovecot-uidlist ourselves.
 *
 * Flag changes rename the file into cur/ with a new `:2,` info (atomic rename(2), which is
 * how Courier and Dovecot do it: no lock is needed, a concurrent reader sees the old or the
 * new name). Keywords are the lower-case letters named in `dovecot-keywords`; a keyword not
 * yet named there is appended to it. Expunge unlinks the files.
 */

class MaildirBackend extends FileBackend {
  /** @param {string} root the user's Maildir (INBOX) with Maildir++ folders inside */
  constructor(root) {
    super();
    this.root = path.resolve(root);
  }

  async folders() {
    return findMaildirs(this.root);
  }

  /** @returns {Promise<string[]>} INBOX first, then by name */
  async mailboxNames() {
    return (await this.folders()).map((f) => f.mailbox);
  }

  async dirFor(mailbox) {
    const f = (await this.folders()).find((x) => x.mailbox === mailbox);
    if (!f) throw new errors.MAILBOX_NOT_FOUND(mailbox);
    return f.dir;
  }

  /**
   * Messages of one mailbox: `{uid, raw, flags, keywords, internalDate, size, path, ...}`.
   * @param {string} mailbox
   */
  async *entries(mailbox) {
    const dir = await this.dirFor(mailbox);
    let uid = 0;
    // readMaildir on the folder's own directory: it is that walk's INBOX. For the root,
    // Maildir++ subfolders follow INBOX in its order, so stop there.
    for await (const m of readMaildir(dir)) {
      if (m.mailbox !== 'INBOX') break;
      yield { ...m, uid: ++uid, maildirUid: m.uid };
    }
  }

  /**
   * Adds/removes flags and keywords by renaming files (`:2,` info, letters sorted as the
   * Maildir spec asks).
   * @param {string} mailbox
   * @param {{uids?: number[], query?: string|object, add?: string[], remove?: string[]}} opts
   */
  async setFlags(mailbox, opts) {
    const dir = await this.dirFor(mailbox);
    const add = splitFlags(opts.add);
    const remove = splitFlags(opts.remove);
    const selected = await this.selectUids(mailbox, opts);
    const names = await readKeywordNames(dir);
    const changed = [];
    let matched = 0;
    for await (const e of this.entries(mailbox)) {
      if (!selected.has(e.uid)) continue;
      matched++;
      const flags = applyChange(e.flags, add.flags, remove.flags);
      const keywords = applyChange(e.keywords, add.keywords, remove.keywords);
      if (sameSet(flags, e.flags) && sameSet(keywords, e.keywords)) continue;
      // $Forwarded is the info letter P; other keywords are dovecot-keywords letters.
      const letters = keywords
        .filter((k) => !hasInfoLetter(k))
        .map((k) => letterFor(names, k))
        .join('');
      const info = [...flags, ...keywords.filter(hasInfoLetter)];
      const target = path.join(dir, 'cur', formatMaildirName(e.baseName, info, letters));
      await fsp.rename(e.path, target);
      changed.push({ uid: e.uid, flags, keywords, modseq: 0 });
    }
    if (names.dirty) await writeKeywordNames(dir, names);
    return { matched, changed, highestModseq: 0 };
  }

  /**
   * Unlinks the messages flagged `\Deleted` (only those among `uids` when given).
   * @param {string} mailbox
   * @param {{uids?: number[]}} [opts]
   */
  async expunge(mailbox, opts = {}) {
    const only = opts.uids ? new Set(opts.uids.map(Number)) : null;
    const victims = [];
    for await (const e of this.entries(mailbox)) {
      if (e.flags.includes('\\Deleted') && (!only || only.has(e.uid))) victims.push(e);
    }
    for (const e of victims)
      await fsp.unlink(e.path).catch((err) => {
        if (err.code !== 'ENOENT') throw err; // already gone: someone else expunged it
      });
    return { expunged: victims.map((e) => e.uid), highestModseq: 0 };
  }
}

async function readKeywordNames(dir) {
  const byName = new Map();
  try {
    for (const line of (await fsp.readFile(path.join(dir, 'dovecot-keywords'), 'utf8')).split(
      '\n',
    )) {
      const m = /^(\d+) (.+)$/.exec(line.trim());
      if (m && Number(m[1]) < 26) byName.set(m[2], Number(m[1]));
    }
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
  }
  return { byName, dirty: false };
}

function letterFor(names, keyword) {
  if (!names.byName.has(keyword)) {
    const used = new Set(names.byName.values());
    let i = 0;
    while (used.has(i)) i++;
    if (i >= 26) return ''; // Maildir has 26 keyword letters; more cannot be stored
    names.byName.set(keyword, i);
    names.dirty = true;
  }
  return String.fromCharCode(97 + names.byName.get(keyword));
}

async function writeKeywordNames(dir, names) {
  const text = [...names.byName].map(([k, i]) => `${i} ${k}\n`).join('');
  const tmp = path.join(dir, `.dovecot-keywords.mailgate-new`);
  await fsp.writeFile(tmp, text);
  await fsp.rename(tmp, path.join(dir, 'dovecot-keywords'));
}

module.exports = { MaildirBackend };
