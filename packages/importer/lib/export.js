'use strict';

const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const { once } = require('node:events');
const {
  formatMboxEntry,
  makeFromLine,
  exportEntry,
  formatMaildirName,
  hasInfoLetter,
} = require('@mailgate/readers');
const { errors, canonicalMailboxName: canonicalName } = require('@mailgate/core');

/*
 * The exporters: mail of the store back to files (mbox, Maildir++, MH). What they guarantee
 * (brief, "Exports"; issue 30.1, 29.6): nothing is written over an existing file or into a
 * non-empty folder without `force` (OUTPUT_EXISTS); never over, into or around a source an
 * import read (OUTPUT_IS_SOURCE, even with force); never outside `out` (every path is resolved
 * and checked, OUTPUT_OUTSIDE, whatever names the store holds); and a killed export leaves no
 * half file under the final name: an mbox is written to a temporary name and renamed, a tree
 * is built in a temporary folder beside `out` and renamed into place (with force into a
 * non-empty folder, moved in file by file, each file whole). Quarantined entries an import
 * could not store are reported (count, ids) or, with includeQuarantined, written as they were.
 */

const VARIANTS = ['original', 'mboxrd', 'mboxo', 'mboxcl2'];

// How many quarantined ids a report lists; the count covers them all.
const REPORT_IDS = 20;

/**
 * OUTPUT_EXISTS unless `out` may be written: an mbox file that does not exist yet, or a tree's
 * folder that does not exist or is empty; with force, any of them. Synchronous and without the
 * store, so the CLI can refuse before it opens a database. The exporters check again.
 * @param {string} out the --out value, named as given in the message
 * @param {'file'|'directory'} what
 * @param {{force?: boolean}} [opts]
 */
function checkExportTarget(out, what, opts = {}) {
  if (opts.force) return;
  let st;
  try {
    st = fs.lstatSync(out);
  } catch (err) {
    if (err.code === 'ENOENT') return;
    throw err;
  }
  if (what === 'directory' && st.isDirectory()) {
    const n = fs.readdirSync(out).length;
    if (!n) return;
    throw new errors.OUTPUT_EXISTS(out, ` and is not empty (${n} entries)`);
  }
  throw new errors.OUTPUT_EXISTS(out, st.isDirectory() ? ' (a folder)' : '');
}

/**
 * OUTPUT_IS_SOURCE when writing `out` would write over, into or around a file or folder an
 * import read (any user's: their mail may be the only copy). Compared after symlinks are
 * resolved. Checked even with force.
 * @param {object} store
 * @param {string} out
 */
async function refuseSources(store, out) {
  const target = realish(out);
  for (const src of await store.importSources()) {
    if (!path.isAbsolute(src)) continue; // imap://… and other non-file sources
    const real = realish(src);
    if (within(real, target) || within(target, real)) {
      throw new errors.OUTPUT_IS_SOURCE(out, real === target ? 'the imported source' : src);
    }
  }
}

/** The path with symlinks of its existing part resolved (the rest as written). */
function realish(p) {
  const abs = path.resolve(p);
  let head = abs;
  const rest = [];
  while (head !== path.dirname(head)) {
    try {
      return path.join(fs.realpathSync(head), ...rest);
    } catch {
      rest.unshift(path.basename(head));
      head = path.dirname(head);
    }
  }
  return abs;
}

/** True when p is root or inside it (both absolute). */
function within(root, p) {
  const rel = path.relative(root, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/**
 * The folder for mailbox `name` (or an MH folder path), checked to lie strictly inside root
 * unless it is root's own mailbox (INBOX): a name planted in the store past every door's
 * check still cannot lead an export elsewhere (OUTPUT_OUTSIDE).
 * @param {string} root the folder being written
 * @param {string} rel its path inside root, `/`-separated (`''`: root itself)
 * @param {string} mailbox for the message
 * @param {string} out for the message
 */
function folderInside(root, rel, mailbox, out) {
  const dir = rel === '' ? root : path.join(root, ...rel.split('/'));
  if (!within(root, dir) || (rel !== '' && dir === root)) {
    throw new errors.OUTPUT_OUTSIDE(JSON.stringify(mailbox).slice(1, -1), out);
  }
  return dir;
}

/**
 * Quarantine entries of a user (of one mailbox when given): what an export reports as not
 * written, and writes with includeQuarantined.
 * @returns {Promise<Array<{id: number, mailbox: string|null, position: string}>>}
 */
async function quarantinedOf(store, userId, mailbox = null) {
  const rows = await store.quarantineEntries(userId);
  return mailbox === null
    ? rows
    : rows.filter((q) => canonicalName(q.mailbox || 'INBOX') === mailbox);
}

/** The report's quarantine part. */
function quarantineReport(entries, included) {
  return {
    count: entries.length,
    ids: entries.slice(0, REPORT_IDS).map((q) => q.id),
    included,
  };
}

/**
 * Writes one mailbox as an mbox file. `original` reproduces an imported mbox byte for byte
 * (From_ line, escaping, separators as they were); other variants write standard output.
 * Written to a temporary file and renamed, so a crash never leaves half a file at `out`.
 * Quarantined entries of the mailbox are reported; with includeQuarantined they follow the
 * messages, each under a made-up From_ line and escaped as mboxrd (their own From_ line was
 * not kept).
 *
 * @param {{store: object, user: string, mailbox: string, out: string, variant?: string, force?: boolean, includeQuarantined?: boolean}} opts
 * @returns {Promise<{messages: number, bytes: number, out: string, variant: string, quarantined: {count: number, ids: number[], included: boolean}}>}
 */
async function exportMbox(opts) {
  const variant = opts.variant || 'original';
  if (!VARIANTS.includes(variant)) {
    throw new errors.USAGE(`unknown mbox variant "${variant}" (use ${VARIANTS.join(', ')})`);
  }
  checkExportTarget(opts.out, 'file', opts);
  const user = await opts.store.getUser(opts.user);
  const mb = await opts.store.getMailbox(user.id, opts.mailbox);
  await refuseSources(opts.store, opts.out);
  const quarantined = await quarantinedOf(opts.store, user.id, mb.name);
  const include = Boolean(opts.includeQuarantined);
  const tmp = `${opts.out}.tmp-${process.pid}-${crypto.randomBytes(3).toString('hex')}`;
  // wx: never follow or reuse something already at the temporary name.
  const out = fs.createWriteStream(tmp, { flags: 'wx' });
  let messages = 0;
  let bytes = 0;
  const write = async (buf) => {
    bytes += buf.length;
    if (!out.write(buf)) await once(out, 'drain');
  };
  try {
    await once(out, 'open');
    for await (const row of opts.store.streamSources(user.id, mb.id)) {
      let buf;
      if (variant === 'original' && row.mbox_from_line && row.mbox_from_line.length) {
        buf = formatMboxEntry({
          fromLine: row.mbox_from_line,
          raw: row.raw,
          variant: row.mbox_variant,
          trailer: row.mbox_trailer || Buffer.alloc(0),
          original: row.mbox_original,
        });
      } else {
        const fromLine =
          row.mbox_from_line && row.mbox_from_line.length
            ? row.mbox_from_line
            : makeFromLine(row.from_addr || 'MAILER-DAEMON', row.internal_date);
        buf = exportEntry(row.raw, variant === 'original' ? 'mboxrd' : variant, fromLine);
      }
      messages++;
      await write(buf);
    }
    if (include) {
      for (const q of quarantined) {
        const raw = await opts.store.quarantineRaw(user.id, q.id);
        const v = variant === 'original' ? 'mboxrd' : variant;
        await write(exportEntry(raw, v, makeFromLine('MAILER-DAEMON', q.createdAt)));
      }
    }
    out.end();
    await once(out, 'finish');
    fs.renameSync(tmp, opts.out);
  } catch (err) {
    // A write still in flight fails once the stream is destroyed: that error is this one's
    // echo, and unheard it would end the process instead of this coded failure.
    out.on('error', () => {});
    out.destroy();
    if (!out.closed) await new Promise((resolve) => out.once('close', resolve));
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  return {
    messages,
    bytes,
    out: opts.out,
    variant,
    quarantined: quarantineReport(quarantined, include),
  };
}

/**
 * Writes all mailboxes as MH folders: mailbox `a/b` → `out/a/b/N`, INBOX → `out/N`, each
 * message under its source file name when it came from an MH folder (so an imported MH tree
 * comes back file for file), else under its uid. The flags go to each folder's
 * `.mh_sequences` as the reader takes them (@mailgate/readers mh.js: `unseen`, `flagged`);
 * a folder whose messages are all unseen and unflagged gets none, as a folder without one
 * reads. Other sequences (`cur`, private ones) are not kept. With includeQuarantined, each
 * quarantined entry goes to its mailbox's folder under its source number when free (it is then
 * where it was in an imported MH tree), else the folder's next free number.
 *
 * @param {{store: object, user: string, out: string, force?: boolean, includeQuarantined?: boolean}} opts
 */
async function exportMh(opts) {
  const sequences = new Map(); // dir -> {unseen: number[], flagged: number[], marked: boolean}
  const highest = new Map(); // dir -> highest message number written there
  /** A free message number in dir: the wanted one when free, else the folder's next. */
  const numberIn = (dir, wanted, used) => {
    let name = wanted;
    if (!name || used.has(`${dir}/${name}`)) {
      // A taken number (mail of another source, or two folders in one mailbox): the folder's
      // next free message number, so the file stays an MH message (a `2.3` was skipped by the
      // reader and lost on re-import).
      let n = (highest.get(dir) || 0) + 1;
      while (used.has(`${dir}/${n}`)) n++;
      name = String(n);
    }
    used.add(`${dir}/${name}`);
    highest.set(dir, Math.max(highest.get(dir) || 0, Number(name)));
    return name;
  };
  const writeFile = (dir, name, raw, date) => {
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, name);
    fs.writeFileSync(file, raw, { flag: 'wx' });
    if (date) fs.utimesSync(file, date, date);
  };
  const res = await exportTree(opts, {
    async message(root, mb, row, used) {
      // A file imported from an MH folder goes back to that folder while it is still in the
      // mailbox the folder became (an `inbox` folder is the mailbox INBOX, not the root).
      const meta = row.source_meta || {};
      const folder =
        meta.mh &&
        typeof meta.mhFolder === 'string' &&
        canonicalName(meta.mhFolder || 'INBOX') === mb.name
          ? meta.mhFolder
          : null;
      const home = folder !== null ? folder : mb.name === 'INBOX' ? '' : mb.name;
      const dir = folderInside(root, home, mb.name, opts.out);
      const wanted =
        row.source_name && /^\d+$/.test(row.source_name) ? row.source_name : String(row.uid);
      const name = numberIn(dir, wanted, used);
      writeFile(dir, name, row.raw, row.internal_date);
      if (!sequences.has(dir)) sequences.set(dir, { unseen: [], flagged: [], marked: false });
      const seq = sequences.get(dir);
      const flags = row.flags || [];
      const seen = flags.includes('\\Seen');
      const flagged = flags.includes('\\Flagged');
      if (!seen) seq.unseen.push(Number(name));
      if (flagged) seq.flagged.push(Number(name));
      if (seen || flagged) seq.marked = true;
    },
    quarantined(root, q, raw, used) {
      const mailbox = canonicalName(q.mailbox || 'INBOX');
      const dir = folderInside(root, mailbox === 'INBOX' ? '' : mailbox, mailbox, opts.out);
      const base = path.posix.basename(String(q.position || ''));
      writeFile(dir, numberIn(dir, /^\d+$/.test(base) ? base : null, used), raw, null);
    },
    finish(root) {
      const stale = [];
      for (const [dir, seq] of sequences) {
        // A folder with no flag set reads as it would without the file: one left in a folder
        // written over with force would give the wrong flags.
        if (!seq.marked) {
          stale.push(path.join(path.relative(root, dir), '.mh_sequences'));
          continue;
        }
        const lines = ['unseen', 'flagged']
          .filter((k) => seq[k].length)
          .map((k) => `${k}: ${mhRanges(seq[k])}\n`);
        fs.writeFileSync(path.join(dir, '.mh_sequences'), lines.join(''));
      }
      return stale;
    },
  });
  return res;
}

/** `1-3 7 10-12` (nmh mh-sequence(5)) of message numbers. */
function mhRanges(numbers) {
  const n = [...numbers].sort((a, b) => a - b);
  const out = [];
  for (let i = 0; i < n.length; i++) {
    let j = i;
    while (j + 1 < n.length && n[j + 1] === n[j] + 1) j++;
    out.push(i === j ? String(n[i]) : `${n[i]}-${n[j]}`);
    i = j;
  }
  return out.join(' ');
}

/**
 * Writes all mailboxes as a Maildir++ tree: INBOX at the root, `a/b` → `.a.b`. Messages keep
 * their base file name (when they came from a maildir) and flags in the `:2,` suffix;
 * keywords are written to each folder's dovecot-keywords. With includeQuarantined, each
 * quarantined entry goes to its mailbox's `cur` under its source file name when free.
 *
 * @param {{store: object, user: string, out: string, force?: boolean, includeQuarantined?: boolean}} opts
 */
async function exportMaildir(opts) {
  const keywordTables = new Map();
  const folderOf = (root, name) => {
    const dir = folderInside(
      root,
      name === 'INBOX' ? '' : '.' + name.split('/').join('.'),
      name,
      opts.out,
    );
    if (!keywordTables.has(dir)) {
      for (const sub of ['cur', 'new', 'tmp'])
        fs.mkdirSync(path.join(dir, sub), { recursive: true });
      if (name !== 'INBOX') fs.writeFileSync(path.join(dir, 'maildirfolder'), '');
      keywordTables.set(dir, []);
    }
    return dir;
  };
  // A base name from the store is a file name only when it is one (no `/`, not `.`/`..`).
  const plainName = (s) => typeof s === 'string' && /^[^/\0]+$/.test(s) && s !== '.' && s !== '..';
  const res = await exportTree(opts, {
    async message(root, mb, row, used) {
      const dir = folderOf(root, mb.name);
      const table = keywordTables.get(dir);
      const letters = [];
      for (const k of row.keywords || []) {
        if (hasInfoLetter(k)) continue; // $Forwarded is the info letter P, not a keyword letter
        let i = table.indexOf(k);
        if (i < 0 && table.length < 26) i = table.push(k) - 1;
        if (i >= 0) letters.push(String.fromCharCode(97 + i));
      }
      const meta = row.source_meta || {};
      // A maildir message is named by its base name within its folder (the `:2,` info changes
      // with its flags). Kept from the source when there is one; made up from mtime and uid
      // (unique in the mailbox) otherwise, or when two stored messages share a source name.
      const madeUp = `${Math.floor(new Date(row.internal_date).getTime() / 1000)}.M${row.uid}.mailgate`;
      let base = plainName(row.source_name) && meta.fileName ? row.source_name : madeUp;
      if (used.has(`${dir}\0${base}`)) base = madeUp;
      if (used.has(`${dir}\0${base}`)) throw new Error(`duplicate maildir name ${base} in ${dir}`);
      used.add(`${dir}\0${base}`);
      const sub = meta.dir === 'new' && !(row.flags || []).length ? 'new' : 'cur';
      const name =
        sub === 'new'
          ? base
          : formatMaildirName(base, [...(row.flags || []), ...(row.keywords || [])], letters);
      const file = path.join(dir, sub, name);
      fs.writeFileSync(file, row.raw, { flag: 'wx' });
      fs.utimesSync(file, row.internal_date, row.internal_date);
    },
    quarantined(root, q, raw, used) {
      const mailbox = canonicalName(q.mailbox || 'INBOX');
      const dir = folderOf(root, mailbox);
      const sub = /(^|\/)new\/[^/]+$/.test(String(q.position || '')) ? 'new' : 'cur';
      let name = path.posix.basename(String(q.position || ''));
      if (!plainName(name) || used.has(`${dir}\0${name.split(':')[0]}`)) {
        name = `${Math.floor(new Date(q.createdAt).getTime() / 1000)}.Q${q.id}.mailgate`;
      }
      used.add(`${dir}\0${name.split(':')[0]}`);
      fs.writeFileSync(path.join(dir, sub, name), raw, { flag: 'wx' });
    },
    finish() {
      for (const [dir, table] of keywordTables) {
        if (table.length) {
          fs.writeFileSync(
            path.join(dir, 'dovecot-keywords'),
            table.map((k, i) => `${i} ${k}\n`).join(''),
          );
        }
      }
      return [];
    },
  });
  return res;
}

/**
 * The frame of a tree export: checks the target, builds the tree in a temporary folder beside
 * `out` (writer.message per stored message, writer.quarantined per included entry,
 * writer.finish for per-folder files; it returns paths, relative to the tree, that a merge
 * must remove from `out`), then puts it in place (placeTree). On any failure the temporary
 * folder is removed: nothing was written under `out`.
 */
async function exportTree(opts, writer) {
  checkExportTarget(opts.out, 'directory', opts);
  const user = await opts.store.getUser(opts.user);
  await refuseSources(opts.store, opts.out);
  const boxes = [];
  for (const { name } of await opts.store.listMailboxes(user.id))
    boxes.push(await opts.store.getMailbox(user.id, name));
  const quarantined = await quarantinedOf(opts.store, user.id);
  const include = Boolean(opts.includeQuarantined);
  const abs = path.resolve(opts.out);
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  const tmp = path.join(
    path.dirname(abs),
    `.${path.basename(abs)}.tmp-${process.pid}-${crypto.randomBytes(3).toString('hex')}`,
  );
  fs.mkdirSync(tmp);
  let messages = 0;
  let bytes = 0;
  try {
    // Names written so far, keyed by folder: the writer keeps names unique per folder.
    const used = new Set();
    for (const mb of boxes) {
      for await (const row of opts.store.streamSources(user.id, mb.id)) {
        await writer.message(tmp, mb, row, used);
        messages++;
        bytes += row.raw.length;
      }
    }
    if (include) {
      for (const q of quarantined) {
        const raw = await opts.store.quarantineRaw(user.id, q.id);
        writer.quarantined(tmp, q, raw, used);
        bytes += raw.length;
      }
    }
    const stale = writer.finish(tmp);
    placeTree(tmp, abs, opts, stale);
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
  return {
    messages,
    bytes,
    mailboxes: boxes.length,
    out: opts.out,
    quarantined: quarantineReport(quarantined, include),
  };
}

/**
 * Puts a finished tree at abs: one rename when abs does not exist or is an empty folder (a
 * killed export leaves nothing under the final name); with force into a non-empty folder, the
 * files are moved in one by one (each whole; same names are replaced) and `stale` paths
 * removed. A symlink in the way is never followed.
 */
function placeTree(tmp, abs, opts, stale) {
  checkExportTarget(opts.out, 'directory', opts); // again: it may have changed meanwhile
  let st = null;
  try {
    st = fs.lstatSync(abs);
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
  }
  if (st && st.isDirectory() && !fs.readdirSync(abs).length) {
    fs.rmdirSync(abs);
    st = null;
  }
  if (!st) {
    fs.renameSync(tmp, abs);
    return;
  }
  if (!st.isDirectory()) throw new errors.OUTPUT_NOT_WRITABLE(opts.out, 'it is not a folder');
  mergeInto(tmp, abs, opts.out);
  for (const rel of stale) fs.rmSync(path.join(abs, rel), { force: true });
  fs.rmSync(tmp, { recursive: true, force: true });
}

function mergeInto(from, to, out) {
  for (const ent of fs.readdirSync(from, { withFileTypes: true })) {
    const src = path.join(from, ent.name);
    const dst = path.join(to, ent.name);
    let st = null;
    try {
      st = fs.lstatSync(dst);
    } catch (err) {
      if (err.code !== 'ENOENT') throw err;
    }
    if (st && st.isSymbolicLink()) {
      throw new errors.OUTPUT_NOT_WRITABLE(out, `a symbolic link is in the way (${dst})`);
    }
    if (ent.isDirectory()) {
      if (!st) fs.renameSync(src, dst);
      else if (st.isDirectory()) mergeInto(src, dst, out);
      else throw new errors.OUTPUT_NOT_WRITABLE(out, `a file is in the way (${dst})`);
    } else {
      if (st && st.isDirectory()) {
        throw new errors.OUTPUT_NOT_WRITABLE(out, `a folder is in the way (${dst})`);
      }
      fs.renameSync(src, dst);
    }
  }
}

module.exports = { exportMbox, exportMh, exportMaildir, checkExportTarget, VARIANTS };
