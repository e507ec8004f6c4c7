'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { once } = require('node:events');
const {
  formatMboxEntry,
  makeFromLine,
  exportEntry,
  formatMaildirName,
  hasInfoLetter,
} = require('@mailgate/readers');
const { errors, canonicalMailboxName: canonicalName } = require('@mailgate/core');

const VARIANTS = ['original', 'mboxrd', 'mboxo', 'mboxcl2'];

/**
 * Writes one mailbox as an mbox file. `original` reproduces an imported mbox byte for byte
 * (From_ line, escaping, separators as they were); other variants write standard output.
 * Written to a temporary file and renamed, so a crash never leaves half a file at `out`.
 *
 * @param {{store: object, user: string, mailbox: string, out: string, variant?: string}} opts
 * @returns {Promise<{messages: number, bytes: number, out: string, variant: string}>}
 */
async function exportMbox(opts) {
  const variant = opts.variant || 'original';
  if (!VARIANTS.includes(variant)) {
    throw new errors.USAGE(`unknown mbox variant "${variant}" (use ${VARIANTS.join(', ')})`);
  }
  const user = await opts.store.getUser(opts.user);
  const mb = await opts.store.getMailbox(user.id, opts.mailbox);
  const tmp = `${opts.out}.tmp-${process.pid}`;
  const out = fs.createWriteStream(tmp);
  let messages = 0;
  let bytes = 0;
  try {
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
      bytes += buf.length;
      if (!out.write(buf)) await once(out, 'drain');
    }
    out.end();
    await once(out, 'finish');
    fs.renameSync(tmp, opts.out);
  } catch (err) {
    out.destroy();
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  return { messages, bytes, out: opts.out, variant };
}

/**
 * Writes all mailboxes as MH folders: mailbox `a/b` → `out/a/b/N`, INBOX → `out/N`, each
 * message under its source file name when it came from an MH folder (so an imported MH tree
 * comes back file for file), else under its uid. The flags go to each folder's
 * `.mh_sequences` as the reader takes them (@mailgate/readers mh.js: `unseen`, `flagged`);
 * a folder whose messages are all unseen and unflagged gets none, as a folder without one
 * reads. Other sequences (`cur`, private ones) are not kept.
 *
 * @param {{store: object, user: string, out: string}} opts
 */
async function exportMh(opts) {
  const sequences = new Map(); // dir -> {unseen: number[], flagged: number[], marked: boolean}
  const highest = new Map(); // dir -> highest message number written there
  const res = await exportTree(opts, async (mb, row, used) => {
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
    const dir = home === '' ? opts.out : path.join(opts.out, ...home.split('/'));
    let name = row.source_name && /^\d+$/.test(row.source_name) ? row.source_name : String(row.uid);
    if (used.has(`${dir}/${name}`)) {
      // A taken number (mail of another source, or two folders in one mailbox): the folder's
      // next free message number, so the file stays an MH message (a `2.3` was skipped by the
      // reader and lost on re-import).
      let n = (highest.get(dir) || 0) + 1;
      while (used.has(`${dir}/${n}`)) n++;
      name = String(n);
    }
    used.add(`${dir}/${name}`);
    highest.set(dir, Math.max(highest.get(dir) || 0, Number(name)));
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, name);
    fs.writeFileSync(file, row.raw);
    fs.utimesSync(file, row.internal_date, row.internal_date);
    if (!sequences.has(dir)) sequences.set(dir, { unseen: [], flagged: [], marked: false });
    const seq = sequences.get(dir);
    const flags = row.flags || [];
    const seen = flags.includes('\\Seen');
    const flagged = flags.includes('\\Flagged');
    if (!seen) seq.unseen.push(Number(name));
    if (flagged) seq.flagged.push(Number(name));
    if (seen || flagged) seq.marked = true;
  });
  for (const [dir, seq] of sequences) {
    // A folder with no flag set reads as it would without the file: one left by an earlier
    // export into the same --out would give the wrong flags.
    if (!seq.marked) {
      fs.rmSync(path.join(dir, '.mh_sequences'), { force: true });
      continue;
    }
    const lines = ['unseen', 'flagged']
      .filter((k) => seq[k].length)
      .map((k) => `${k}: ${mhRanges(seq[k])}\n`);
    fs.writeFileSync(path.join(dir, '.mh_sequences'), lines.join(''));
  }
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
 * keywords are written to each folder's dovecot-keywords.
 *
 * @param {{store: object, user: string, out: string}} opts
 */
async function exportMaildir(opts) {
  const keywordTables = new Map();
  const res = await exportTree(opts, async (mb, row, used) => {
    const dir =
      mb.name === 'INBOX' ? opts.out : path.join(opts.out, '.' + mb.name.split('/').join('.'));
    if (!keywordTables.has(dir)) {
      for (const sub of ['cur', 'new', 'tmp'])
        fs.mkdirSync(path.join(dir, sub), { recursive: true });
      if (mb.name !== 'INBOX') fs.writeFileSync(path.join(dir, 'maildirfolder'), '');
      keywordTables.set(dir, []);
    }
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
    let base = row.source_name && meta.fileName ? row.source_name : madeUp;
    if (used.has(`${dir}\0${base}`)) base = madeUp;
    if (used.has(`${dir}\0${base}`)) throw new Error(`duplicate maildir name ${base} in ${dir}`);
    used.add(`${dir}\0${base}`);
    const sub = meta.dir === 'new' && !(row.flags || []).length ? 'new' : 'cur';
    const name =
      sub === 'new'
        ? base
        : formatMaildirName(base, [...(row.flags || []), ...(row.keywords || [])], letters);
    const file = path.join(dir, sub, name);
    fs.writeFileSync(file, row.raw);
    fs.utimesSync(file, row.internal_date, row.internal_date);
  });
  for (const [dir, table] of keywordTables) {
    if (table.length) {
      fs.writeFileSync(
        path.join(dir, 'dovecot-keywords'),
        table.map((k, i) => `${i} ${k}\n`).join(''),
      );
    }
  }
  return res;
}

async function exportTree(opts, writeOne) {
  const user = await opts.store.getUser(opts.user);
  const boxes = [];
  for (const { name } of await opts.store.listMailboxes(user.id))
    boxes.push(await opts.store.getMailbox(user.id, name));
  fs.mkdirSync(opts.out, { recursive: true });
  let messages = 0;
  let bytes = 0;
  // Names written so far, keyed by folder: writeOne keeps names unique per folder.
  const used = new Set();
  for (const mb of boxes) {
    for await (const row of opts.store.streamSources(user.id, mb.id)) {
      await writeOne(mb, row, used);
      messages++;
      bytes += row.raw.length;
    }
  }
  return { messages, bytes, mailboxes: boxes.length, out: opts.out };
}

module.exports = { exportMbox, exportMh, exportMaildir, VARIANTS };
