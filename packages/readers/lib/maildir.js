'use strict';

const fsp = require('fs/promises');
const path = require('path');
const { listDir, statOrNull, isDirEntry, cmpStr, readMessageFile } = require('./fs-util');
const { splitFlags } = require('./flags');

// Maildir info flags (https://cr.yp.to/proto/maildir.html); P is Dovecot's "passed" = forwarded.
const FLAG_BY_LETTER = {
  D: '\\Draft',
  F: '\\Flagged',
  P: '$Forwarded',
  R: '\\Answered',
  S: '\\Seen',
  T: '\\Deleted',
};
const LETTER_BY_FLAG = Object.fromEntries(Object.entries(FLAG_BY_LETTER).map(([l, f]) => [f, l]));

/**
 * Split a Maildir file name into base name and `:2,` info flags. `!` is accepted in place of `:`
 * (the separator used on file systems that forbid colons, e.g. Dovecot's maildir on Windows/FAT).
 * Unknown upper-case letters are ignored; lower-case letters are Dovecot keyword indexes.
 * @param {string} fileName
 * @returns {{baseName: string, flags: string[], keywordLetters: string}}
 */
function parseMaildirInfo(fileName) {
  let sep = fileName.indexOf(':');
  if (sep < 0) sep = fileName.lastIndexOf('!2,');
  if (sep < 0) return { baseName: fileName, flags: [], keywordLetters: '' };
  const baseName = fileName.slice(0, sep);
  const info = fileName.slice(sep + 1);
  // Only version 2 info carries flags; ":1," (experimental semantics) has none we understand.
  if (!info.startsWith('2,')) return { baseName, flags: [], keywordLetters: '' };
  const flags = new Set();
  const letters = new Set();
  for (const ch of info.slice(2)) {
    if (FLAG_BY_LETTER[ch]) flags.add(FLAG_BY_LETTER[ch]);
    else if (ch >= 'a' && ch <= 'z') letters.add(ch);
  }
  return { baseName, flags: [...flags].sort(), keywordLetters: [...letters].sort().join('') };
}

/**
 * Build a Maildir file name `<baseName>:2,<letters>` for export; letters in ASCII order as the
 * Maildir spec requires. Flags without a Maildir letter (e.g. \Recent) are dropped. Keywords
 * with an info letter (`$Forwarded` → P) may be given among `flags`.
 * @param {string} baseName
 * @param {string[]} [flags] flags, and keywords that have an info letter
 * @param {string|string[]} [keywordLetters] Dovecot keyword letters a–z
 * @returns {string}
 */
function formatMaildirName(baseName, flags = [], keywordLetters = '') {
  const letters = new Set();
  for (const f of flags) if (LETTER_BY_FLAG[f]) letters.add(LETTER_BY_FLAG[f]);
  for (const ch of Array.isArray(keywordLetters) ? keywordLetters : [...keywordLetters]) {
    if (ch >= 'a' && ch <= 'z') letters.add(ch);
  }
  return `${baseName}:2,${[...letters].sort().join('')}`;
}

async function readTextOrNull(p) {
  try {
    return await fsp.readFile(p, 'utf8');
  } catch (err) {
    if (err.code === 'ENOENT') return null;
    throw err;
  }
}

/** `dovecot-keywords`: lines `<index> <name>`; index 0 is letter a. */
async function readKeywords(dir) {
  const text = await readTextOrNull(path.join(dir, 'dovecot-keywords'));
  const map = new Map();
  if (text == null) return map;
  for (const line of text.split(/\r?\n/)) {
    const m = /^(\d+)\s+(\S+)/.exec(line);
    if (m && Number(m[1]) < 26) map.set(String.fromCharCode(97 + Number(m[1])), m[2]);
  }
  return map;
}

/**
 * `dovecot-uidlist`. Version 3 (Dovecot >= 1.1): header `3 V<uidvalidity> N<nextuid> ...`, then
 * `<uid> [<ext> ...] :<filename>`. Version 1: header `1 <uidvalidity> <nextuid>`, then
 * `<uid> <filename>`. File names are matched on their base name since flags change the rest.
 * @param {string} dir
 * @returns {Promise<{uidValidity: number|null, nextUid: number|null, uids: Map<string, number>}|null>}
 */
async function readUidlist(dir) {
  const text = await readTextOrNull(path.join(dir, 'dovecot-uidlist'));
  if (text == null) return null;
  const lines = text.split(/\r?\n/);
  const header = (lines.shift() || '').trim().split(/\s+/);
  const version = Number(header[0]);
  let uidValidity = null;
  let nextUid = null;
  if (version === 1) {
    uidValidity = Number(header[1]) || null;
    nextUid = Number(header[2]) || null;
  } else {
    const v = header.find((h) => /^V\d+$/.test(h));
    uidValidity = v ? Number(v.slice(1)) : null;
    const n = header.find((h) => /^N\d+$/.test(h));
    nextUid = n ? Number(n.slice(1)) : null;
  }
  const uids = new Map();
  for (const line of lines) {
    const m = /^(\d+)\s+(.*)$/.exec(line);
    if (!m) continue;
    let name;
    if (version === 1) name = m[2].trim();
    else {
      // Extension fields never contain ":"; the file name follows the first " :" (or a leading ":").
      const rest = ' ' + m[2];
      const i = rest.indexOf(' :');
      if (i < 0) continue;
      name = rest.slice(i + 2);
    }
    if (name) uids.set(parseMaildirInfo(name).baseName, Number(m[1]));
  }
  return { uidValidity, nextUid, uids };
}

/** Why a name inside a Maildir is not a message, or null if it may be one. */
function controlFileReason(name) {
  if (name.startsWith('.')) return 'hidden file';
  if (name.startsWith('dovecot')) return 'dovecot index/control file';
  if (name.startsWith('courier')) return 'courier control file';
  if (name === 'maildirfolder' || name === 'subscriptions') return 'maildir control file';
  return null;
}

async function isMaildir(dir) {
  for (const sub of ['cur', 'new']) {
    const st = await statOrNull(path.join(dir, sub));
    if (st && st.isDirectory()) return true;
  }
  return false;
}

/**
 * Every maildir under root: root itself → INBOX; Maildir++ `.A.B` dirs directly under root →
 * `A/B`; any other nested dir that has cur/ or new/ → its relative path.
 */
async function findMaildirs(root) {
  const found = [];
  async function walk(dir, rel) {
    if (await isMaildir(dir)) found.push({ mailbox: rel === '' ? 'INBOX' : rel, dir });
    const ents = (await listDir(dir)).sort((a, b) => cmpStr(a.name, b.name));
    for (const ent of ents) {
      const name = ent.name;
      if (name === 'cur' || name === 'new' || name === 'tmp') continue;
      if (!(await isDirEntry(dir, ent))) continue;
      const full = path.join(dir, name);
      if (name.startsWith('.')) {
        // Maildir++ folders only live directly in the root and are not nested further.
        if (rel === '' && name.length > 1 && name !== '..' && (await isMaildir(full))) {
          const mailbox = name.slice(1).split('.').filter(Boolean).join('/');
          if (mailbox) found.push({ mailbox, dir: full });
        }
        continue;
      }
      await walk(full, rel === '' ? name : `${rel}/${name}`);
    }
  }
  await walk(root, '');
  return found.sort((a, b) => cmpMailbox(a.mailbox, b.mailbox) || cmpStr(a.dir, b.dir));
}

/** INBOX first, then plain string order. */
function cmpMailbox(a, b) {
  if (a === b) return 0;
  if (a === 'INBOX') return -1;
  if (b === 'INBOX') return 1;
  return cmpStr(a, b);
}

/** Leading digits of a Maildir name are the delivery time (seconds since the epoch). */
function deliveryTime(name) {
  const m = /^\d+/.exec(name);
  return m ? Number(m[0]) : Number.MAX_SAFE_INTEGER;
}

/**
 * Position within a mailbox: files known to dovecot-uidlist by uid, then the rest (deliveries Dovecot
 * has not seen yet, which would get uids >= nextuid) by delivery time, then file name.
 */
function cmpPosition(a, b) {
  const au = a.uid !== null;
  const bu = b.uid !== null;
  if (au !== bu) return au ? -1 : 1;
  if (au && a.uid !== b.uid) return a.uid - b.uid;
  return a.time - b.time || cmpStr(a.baseName, b.baseName);
}

/** Full order; the base name (not the flag suffix) decides position, so resume keys stay valid. */
function cmpFile(a, b) {
  return cmpPosition(a, b) || cmpStr(a.fileName, b.fileName) || cmpStr(a.dir, b.dir);
}

/**
 * Read all messages of a Maildir / Maildir++ tree, one file at a time, in deterministic order
 * (mailboxes INBOX first then by name; within a mailbox see cmpFile).
 * @param {string} root
 * @param {object} [opts]
 * @param {(path: string, reason: string) => void} [opts.onSkip] called for every file not yielded
 * @param {{mailbox: string, fileName: string}} [opts.startAfter] resume key: yield only what comes
 *   after it in the same order (matched by position, so it works if the file was since renamed
 *   by a flag change or deleted)
 * @returns {AsyncGenerator<{mailbox: string, path: string, dir: 'cur'|'new', baseName: string,
 *   fileName: string, flags: string[], keywords: string[], uid: number|null,
 *   uidValidity: number|null, uidNext: number|null, internalDate: Date, size: number,
 *   raw: Buffer}>}
 */
async function* readMaildir(root, opts = {}) {
  const onSkip = opts.onSkip || (() => {});
  const startAfter = opts.startAfter || null;
  // A missing root is a caller error, unlike folders vanishing mid-walk.
  if (!(await fsp.stat(root)).isDirectory()) throw new Error(`not a directory: ${root}`);
  for (const mb of await findMaildirs(root)) {
    const mbCmp = startAfter ? cmpMailbox(mb.mailbox, startAfter.mailbox) : 1;
    if (mbCmp < 0) continue;
    const uidlist = await readUidlist(mb.dir);
    const keywordNames = await readKeywords(mb.dir);
    const uidValidity = uidlist ? uidlist.uidValidity : null;
    const uidNext = uidlist ? uidlist.nextUid : null;
    const keyOf = (dir, fileName) => {
      const info = parseMaildirInfo(fileName);
      const uid =
        uidlist && uidlist.uids.has(info.baseName) ? uidlist.uids.get(info.baseName) : null;
      return { dir, fileName, ...info, uid, time: deliveryTime(fileName) };
    };
    const files = [];
    for (const sub of ['new', 'cur', 'tmp']) {
      for (const ent of await listDir(path.join(mb.dir, sub))) {
        const p = path.join(mb.dir, sub, ent.name);
        if (sub === 'tmp') onSkip(p, 'in tmp/ (delivery not finished)');
        else if (controlFileReason(ent.name)) onSkip(p, controlFileReason(ent.name));
        else if (await isDirEntry(path.join(mb.dir, sub), ent)) onSkip(p, 'directory');
        else files.push(keyOf(sub, ent.name));
      }
    }
    files.sort(cmpFile);
    const resume = mbCmp === 0 ? keyOf('cur', startAfter.fileName) : null;
    for (const f of files) {
      if (resume && cmpPosition(f, resume) <= 0) continue;
      const p = path.join(mb.dir, f.dir, f.fileName);
      const r = await readMessageFile(p);
      if (r.skip) {
        onSkip(p, r.skip);
        continue;
      }
      // P ($Forwarded) is an info letter but a keyword in the data model: one split for all.
      const split = splitFlags([
        ...f.flags,
        ...[...f.keywordLetters].map((l) => keywordNames.get(l)).filter(Boolean),
      ]);
      yield {
        mailbox: mb.mailbox,
        path: p,
        dir: f.dir,
        baseName: f.baseName,
        fileName: f.fileName,
        flags: split.flags,
        keywords: split.keywords,
        uid: f.uid,
        uidValidity,
        uidNext,
        internalDate: new Date(r.stat.mtimeMs),
        size: r.stat.size,
        raw: r.raw,
      };
    }
  }
}

/**
 * Whether a keyword is written as a Maildir info letter (`$Forwarded` → P) rather than in
 * dovecot-keywords.
 * @param {string} keyword
 */
function hasInfoLetter(keyword) {
  return Object.prototype.hasOwnProperty.call(LETTER_BY_FLAG, keyword);
}

module.exports = {
  readMaildir,
  parseMaildirInfo,
  formatMaildirName,
  hasInfoLetter,
  readUidlist,
  findMaildirs,
};
