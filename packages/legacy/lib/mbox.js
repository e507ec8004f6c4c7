'use strict';

const fs = require('node:fs');
const fsp = require('node:fs/promises');
const path = require('node:path');
const { pipeline } = require('node:stream/promises');
const { errors } = require('@mailgate/core');
const {
  MboxSplitter,
  formatMboxEntry,
  flagsFromHeaders,
  headerBlock,
} = require('@mailgate/readers');
// The importer's From_ line date reader: INTERNALDATE is read the same way on every path.
const { fromLineDate } = require('@mailgate/importer/lib/sources');
const { FileBackend } = require('./file-backend');
const { dotlock } = require('./lock');
const { splitFlags } = require('@mailgate/store');
const { applyChange, sameSet } = require('./message');

/*
 * The direct mbox backend: one file per mailbox, read by streaming it through the readers'
 * MboxSplitter. UIDs are positions: the n-th message of the file has uid n (1-based), stable
 * until the next expunge — the file holds no UIDs of its own unless an IMAP server wrote
 * X-UID headers, and honouring those only for some messages would mix two numberings.
 *
 * Writes (flags and expunge) rewrite the whole file, crash-safely: under the dotlock the new
 * contents go to a temporary file in the same directory, which is fsync'ed and then renamed
 * over the mailbox (rename(2) is atomic), then the directory is fsync'ed. A process killed at
 * any point leaves either the old file (plus a stale temporary, removed by the next writer)
 * or the new one, never a mix. Costs a second copy of the file on disk while it runs.
 */

const TMP_SUFFIX = '.mailgate-new';

class MboxBackend extends FileBackend {
  /** @param {string} dir the user's mbox directory (e.g. Dovecot's ~/mail) */
  constructor(dir) {
    super();
    this.dir = path.resolve(dir);
  }

  /**
   * File of a mailbox: INBOX is `inbox.mbox`, `INBOX` or `inbox` in the directory (Dovecot's
   * `mbox:~/mail:INBOX=~/mail/inbox.mbox`); any other mailbox is the file of that relative path.
   * @param {string} mailbox
   */
  fileFor(mailbox) {
    if (mailbox === 'INBOX') {
      for (const n of ['inbox.mbox', 'INBOX', 'inbox']) {
        const p = path.join(this.dir, n);
        if (fs.existsSync(p)) return p;
      }
    } else if (!mailbox.split('/').some((s) => s === '' || s === '.' || s === '..')) {
      const p = path.join(this.dir, mailbox);
      if (fs.existsSync(p) && fs.statSync(p).isFile()) return p;
    }
    throw new errors.MAILBOX_NOT_FOUND(mailbox);
  }

  /** @returns {Promise<string[]>} INBOX first, then by name */
  async mailboxNames() {
    const names = [];
    const walk = async (dir, rel) => {
      for (const ent of await fsp.readdir(dir, { withFileTypes: true })) {
        if (ent.name.startsWith('.') || ent.name.endsWith('.lock')) continue;
        const r = rel ? `${rel}/${ent.name}` : ent.name;
        if (ent.isDirectory()) await walk(path.join(dir, ent.name), r);
        else if (ent.isFile()) names.push(/^(inbox\.mbox|inbox)$/i.test(r) ? 'INBOX' : r);
      }
    };
    await walk(this.dir, '');
    return [...new Set(names)].sort((a, b) =>
      a === 'INBOX' ? -1 : b === 'INBOX' ? 1 : a < b ? -1 : a > b ? 1 : 0,
    );
  }

  /**
   * Messages of a mailbox in file order: `{uid, raw, flags, keywords, internalDate, entry}`.
   * Memory: one message at a time (the splitter streams).
   * @param {string} mailbox
   */
  async *entries(mailbox) {
    yield* readEntries(this.fileFor(mailbox));
  }

  /**
   * Adds/removes flags and keywords; written back as `Status`/`X-Status`/`X-Keywords`
   * headers by one crash-safe rewrite.
   * @param {string} mailbox
   * @param {{uids?: number[], query?: string|object, add?: string[], remove?: string[]}} opts
   */
  async setFlags(mailbox, opts) {
    const file = this.fileFor(mailbox);
    const add = splitFlags(opts.add);
    const remove = splitFlags(opts.remove);
    const release = await dotlock(file);
    try {
      const selected = await this.selectUids(mailbox, opts);
      const changed = [];
      let matched = 0;
      await rewrite(file, (e) => {
        if (!selected.has(e.uid)) return e;
        matched++;
        const flags = applyChange(e.flags, add.flags, remove.flags);
        const keywords = applyChange(e.keywords, add.keywords, remove.keywords);
        if (sameSet(flags, e.flags) && sameSet(keywords, e.keywords)) return e;
        changed.push({ uid: e.uid, flags, keywords, modseq: 0 });
        return { ...e, raw: withFlagHeaders(e.raw, flags, keywords) };
      });
      return { matched, changed, highestModseq: 0 };
    } finally {
      await release();
    }
  }

  /**
   * Removes the messages flagged `\Deleted` (only those among `uids` when given) by one
   * crash-safe rewrite. Returns their uids (positions before the expunge).
   * @param {string} mailbox
   * @param {{uids?: number[]}} [opts]
   */
  async expunge(mailbox, opts = {}) {
    const file = this.fileFor(mailbox);
    const only = opts.uids ? new Set(opts.uids.map(Number)) : null;
    const release = await dotlock(file);
    try {
      const expunged = [];
      await rewrite(file, (e) => {
        if (!e.flags.includes('\\Deleted') || (only && !only.has(e.uid))) return e;
        expunged.push(e.uid);
        return null;
      });
      return { expunged, highestModseq: 0 };
    } finally {
      await release();
    }
  }
}

async function* readEntries(file) {
  const splitter = new MboxSplitter();
  const done = pipeline(fs.createReadStream(file, { highWaterMark: 1 << 20 }), splitter);
  done.catch(() => {}); // surfaced below
  let uid = 0;
  for await (const entry of splitter) {
    if (entry.error) {
      yield { uid: 0, entry };
      continue;
    }
    const f = flagsFromHeaders(headerBlock(entry.raw));
    yield {
      uid: ++uid,
      raw: entry.raw,
      flags: f.flags,
      keywords: f.keywords,
      internalDate: fromLineDate(entry.fromLine),
      entry,
    };
  }
  await done;
}

// Non-messages (bytes before the first From_ line) are kept as they are by rewrite().
const realEntries = async function* (file) {
  for await (const e of readEntries(file)) if (e.uid) yield e;
};

/**
 * Rewrites `file` through `fn(entry)` (return the entry to keep it, a copy with a new `raw`
 * to change it, null to drop it): temporary file, fsync, rename, fsync of the directory.
 * Unchanged entries are copied byte for byte (formatMboxEntry), so their escaping variant,
 * From_ line and separators survive. Call it under the dotlock.
 * @param {string} file
 * @param {(e: object) => object|null} fn
 */
async function rewrite(file, fn) {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}${TMP_SUFFIX}`);
  const st = await fsp.stat(file);
  const fh = await fsp.open(tmp, 'w', st.mode & 0o7777);
  try {
    let buf = [];
    let size = 0;
    const flush = async () => {
      if (!buf.length) return;
      await fh.write(Buffer.concat(buf));
      buf = [];
      size = 0;
    };
    for await (const e of readEntries(file)) {
      let out;
      if (!e.uid) out = formatMboxEntry(e.entry);
      else {
        const r = fn(e);
        if (!r) continue;
        out =
          r.raw === e.raw
            ? formatMboxEntry(e.entry)
            : formatMboxEntry({ ...e.entry, raw: r.raw, original: null });
      }
      buf.push(out);
      size += out.length;
      if (size >= 1 << 20) await flush();
    }
    await flush();
    await fh.sync(); // the data must be on disk before the rename makes it the mailbox
  } finally {
    await fh.close();
  }
  if (process.getuid && process.getuid() === 0)
    await fsp.chown(tmp, st.uid, st.gid).catch(() => {});
  await fsp.rename(tmp, file);
  const dirFd = await fsp.open(path.dirname(file), 'r');
  try {
    await dirFd.sync(); // and the rename itself must survive a power loss
  } finally {
    await dirFd.close();
  }
}

// X-Mozilla-Status carries flags too: it is dropped, or it would contradict the new headers.
const FLAG_HEADER_RE = /^(status|x-status|x-keywords|x-mozilla-status):/i;

/**
 * The message with its `Status:` (R = \Seen, O = no longer new), `X-Status:` (A \Answered,
 * F \Flagged, T \Draft, D \Deleted — the UW-IMAP/mutt/Dovecot letters) and `X-Keywords:`
 * headers replaced by ones describing `flags`/`keywords`, added at the end of the header.
 * @param {Buffer} raw
 * @param {string[]} flags
 * @param {string[]} keywords
 * @returns {Buffer}
 */
function withFlagHeaders(raw, flags, keywords) {
  const head = headerBlock(raw);
  const eol = head.includes('\r\n') ? '\r\n' : '\n';
  const lines = head.toString('latin1').split(/(?<=\n)/);
  const kept = [];
  let skipping = false;
  for (const line of lines) {
    if (/^[ \t]/.test(line) && skipping) continue; // folded continuation (RFC 5322 2.2.3)
    skipping = FLAG_HEADER_RE.test(line);
    if (!skipping) kept.push(line);
  }
  let text = kept.join('');
  if (text && !text.endsWith('\n')) text += eol;
  text += `Status: ${flags.includes('\\Seen') ? 'RO' : 'O'}${eol}`;
  const x = [
    ['\\Answered', 'A'],
    ['\\Flagged', 'F'],
    ['\\Draft', 'T'],
    ['\\Deleted', 'D'],
  ]
    .filter(([f]) => flags.includes(f))
    .map(([, l]) => l)
    .join('');
  if (x) text += `X-Status: ${x}${eol}`;
  if (keywords.length) text += `X-Keywords: ${keywords.join(' ')}${eol}`;
  return Buffer.concat([Buffer.from(text, 'latin1'), raw.subarray(head.length)]);
}

module.exports = { MboxBackend, rewrite, withFlagHeaders, readEntries: realEntries };
