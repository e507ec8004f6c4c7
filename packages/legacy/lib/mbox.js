'use strict';

const fs = require('node:fs');
const fsp = require('node:fs/promises');
const path = require('node:path');
const { promisify } = require('node:util');
const { Readable } = require('node:stream');
const { pipeline } = require('node:stream/promises');
// fromLineDate: INTERNALDATE is read from the From_ line the same way on every path (import too).
const {
  MboxSplitter,
  flagsFromHeaders,
  headerBlock,
  isFromLine,
  fromLineDate,
} = require('@mailgate/readers');
const { compilePredicate } = require('@mailgate/query');
const { errors, createLogger } = require('@mailgate/core');
const { FileBackend } = require('./file-backend');
const { lockMailbox, readLock, DEFAULT_WAIT_MS } = require('./lock');
const { rewriteInPlace, recover, needsRecovery } = require('./mbox-journal');
const { splitFlags } = require('@mailgate/readers');
const { applyChange, sameSet, describe, toAst } = require('./message');

/*
 * The direct mbox backend: one file per mailbox, read by streaming it through the readers'
 * MboxSplitter. UIDs are positions: the n-th message of the file has uid n (1-based), stable
 * until the next expunge — the file holds no UIDs of its own unless an IMAP server wrote
 * X-UID headers, and honouring those only for some messages would mix two numberings.
 *
 * Locks as the other writers on the system do (lock.js): reads under a shared fcntl lock,
 * writes under the exclusive fcntl lock plus the dotlock. Writes (flags and expunge) rewrite the
 * file in place, from the first changed message on, through a redo journal (mbox-journal.js):
 * the inode never changes, so a delivery agent that opened the file before waiting for the
 * locks appends to the mailbox, not to a replaced file; a crash at any point loses nothing.
 *
 * Files in the directory that are not mbox files (not empty, and not starting with a From_
 * line) are not mailboxes: they are skipped with a logged reason (issue 17.6).
 */

const readAt = (fd, buf, off, len, pos) =>
  promisify(fs.read)(fd, buf, off, len, pos).then((r) => r.bytesRead);

let defaultLogger = null;
const logger = () => (defaultLogger ||= createLogger({ logLevel: process.env.LOG_LEVEL }));

/**
 * Whether a file is an mbox: empty, or starting with a From_ line (RFC 4155).
 * @param {string} file
 * @returns {boolean}
 */
function isMboxFile(file) {
  let fd;
  try {
    fd = fs.openSync(file, 'r');
    const head = Buffer.alloc(1024);
    const n = fs.readSync(fd, head, 0, head.length, 0);
    if (n === 0) return true;
    const nl = head.subarray(0, n).indexOf(0x0a);
    return isFromLine(head.subarray(0, nl < 0 ? n : nl + 1));
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

class MboxBackend extends FileBackend {
  /**
   * @param {string} dir the user's mbox directory (e.g. Dovecot's ~/mail)
   * @param {{lockWaitMs?: number, logger?: object}} [opts] lockWaitMs: how long a request waits
   *   for another writer's lock before MAILBOX_LOCKED (default 10 s, below the API's 30 s
   *   request timeout; the service passes MAILGATE_MBOX_LOCK_WAIT_MS from core config)
   */
  constructor(dir, opts = {}) {
    super();
    this.dir = path.resolve(dir);
    this.lockWaitMs = opts.lockWaitMs ?? DEFAULT_WAIT_MS;
    this.log = opts.logger || null;
  }

  /** @private */
  get logger() {
    return this.log || logger();
  }

  /**
   * File of a mailbox: INBOX is `inbox.mbox`, `INBOX` or `inbox` in the directory (Dovecot's
   * `mbox:~/mail:INBOX=~/mail/inbox.mbox`); any other mailbox is the file of that relative path.
   * A file that is not an mbox is no mailbox (MAILBOX_NOT_FOUND, reason logged). Neither is a
   * symbolic link, nor a path through one (issue 29.8): the listing never shows them, and a
   * name given directly must not reach a file outside the user's folder.
   * @param {string} mailbox
   */
  fileFor(mailbox) {
    let p = null;
    if (mailbox === 'INBOX') {
      p = ['inbox.mbox', 'INBOX', 'inbox']
        .map((n) => path.join(this.dir, n))
        .find((f) => fs.existsSync(f));
      if (p && !this.plainFile(path.basename(p))) p = null;
    } else if (
      !mailbox.split('/').some((s) => s === '' || s === '.' || s === '..' || s.startsWith('.'))
    ) {
      if (this.plainFile(mailbox)) p = path.join(this.dir, mailbox);
    }
    if (p && !isMboxFile(p)) {
      this.logger.warn({ mailbox }, 'legacy mbox: skipped a file that is not an mbox');
      p = null;
    }
    if (!p) throw new errors.MAILBOX_NOT_FOUND(mailbox);
    return p;
  }

  /**
   * True when rel (a `/`-separated path under the folder) is a regular file reached through
   * real folders only: lstat of every segment, so no symbolic link is followed.
   * @private
   * @param {string} rel
   */
  plainFile(rel) {
    const segs = rel.split('/');
    let cur = this.dir;
    for (let i = 0; i < segs.length; i++) {
      cur = path.join(cur, segs[i]);
      let st;
      try {
        st = fs.lstatSync(cur);
      } catch {
        return false;
      }
      if (i < segs.length - 1 ? !st.isDirectory() : !st.isFile()) return false;
    }
    return true;
  }

  /** @returns {Promise<string[]>} INBOX first, then by name; non-mbox files left out (one log line) */
  async mailboxNames() {
    const names = [];
    const skipped = [];
    const walk = async (dir, rel) => {
      for (const ent of await fsp.readdir(dir, { withFileTypes: true })) {
        if (ent.name.startsWith('.') || ent.name.endsWith('.lock')) continue;
        const r = rel ? `${rel}/${ent.name}` : ent.name;
        const full = path.join(dir, ent.name);
        if (ent.isDirectory()) await walk(full, r);
        else if (ent.isFile()) {
          if (!isMboxFile(full)) {
            skipped.push(r);
            continue;
          }
          names.push(/^(inbox\.mbox|inbox)$/i.test(r) ? 'INBOX' : r);
        }
      }
    };
    await walk(this.dir, '');
    // One line for the whole folder: a folder of 2,600 other files gave 2,600 lines (30.10).
    if (skipped.length) {
      this.logger.warn(
        { skipped: skipped.length, first: skipped.slice(0, 3).join(', ') },
        'legacy mbox: skipped files that are not mboxes',
      );
    }
    return [...new Set(names)].sort((a, b) =>
      a === 'INBOX' ? -1 : b === 'INBOX' ? 1 : a < b ? -1 : a > b ? 1 : 0,
    );
  }

  /**
   * Messages of a mailbox in file order: `{uid, raw, flags, keywords, internalDate, entry}`,
   * read under the shared fcntl lock (held while the caller iterates). A rewrite left by a
   * killed writer is recovered first. Memory: one message at a time (the splitter streams).
   * @param {string} mailbox
   */
  async *entries(mailbox) {
    const file = this.fileFor(mailbox);
    if (needsRecovery(file)) await this.withWriteLock(file, mailbox, async () => {});
    const lk = await readLock(file, { timeoutMs: this.lockWaitMs, name: mailbox });
    // Read through the locked descriptor (the path could name another file by now); a file
    // stream would close it. The descriptor may only be closed once no read on it is pending:
    // its number could be reused at once by another open.
    let pending = Promise.resolve();
    let stop = false;
    const input = Readable.from(
      (async function* () {
        for (let pos = 0; !stop;) {
          const buf = Buffer.allocUnsafe(1 << 20);
          const read = readAt(lk.fd, buf, 0, buf.length, pos);
          pending = read.catch(() => {});
          const n = await read;
          if (!n) return;
          pos += n;
          yield buf.subarray(0, n);
        }
      })(),
      { objectMode: false },
    );
    try {
      yield* readEntries(input);
    } finally {
      stop = true;
      input.destroy();
      await pending;
      lk.release();
    }
  }

  /**
   * Runs `fn(fd)` with the write locks of the mailbox file held, after recovering a rewrite
   * left by a killed writer.
   * @private
   */
  async withWriteLock(file, mailbox, fn) {
    const lk = await lockMailbox(file, {
      timeoutMs: this.lockWaitMs,
      name: mailbox,
      logger: this.logger,
    });
    try {
      // A writer that replaces files by rename (mutt's default, old mailgate) may have swapped
      // the inode between our open and our lock: the lock must be on the current file.
      const a = fs.fstatSync(lk.fd);
      const b = fs.statSync(file);
      if (a.ino !== b.ino || a.dev !== b.dev) {
        await lk.release();
        return this.withWriteLock(file, mailbox, fn);
      }
      await recover(file, lk.fd, this.logger);
      return await fn(lk.fd);
    } finally {
      await lk.release();
    }
  }

  /**
   * uids selected by `opts.uids` or by a query, read without taking locks (the caller holds
   * the write lock).
   * @private
   */
  async selectLocked(file, mailbox, opts) {
    if (opts.uids) return new Set(opts.uids.map(Number));
    const test = compilePredicate(toAst(opts.query ?? ''));
    const out = new Set();
    for await (const e of readEntries(fs.createReadStream(file, { highWaterMark: 1 << 20 }))) {
      if (test(describe(e.raw, { ...e, mailbox }).msg)) out.add(e.uid);
    }
    return out;
  }

  /**
   * Adds/removes flags and keywords; written back as `Status`/`X-Status`/`X-Keywords`
   * headers by one in-place rewrite.
   * @param {string} mailbox
   * @param {{uids?: number[], query?: string|object, add?: string[], remove?: string[]}} opts
   */
  async setFlags(mailbox, opts) {
    const file = this.fileFor(mailbox);
    const add = splitFlags(opts.add);
    const remove = splitFlags(opts.remove);
    toAst(opts.query ?? ''); // a bad query is a 400 before any lock is taken
    return this.withWriteLock(file, mailbox, async (fd) => {
      const selected = await this.selectLocked(file, mailbox, opts);
      const changed = [];
      let matched = 0;
      await rewriteInPlace(file, fd, (e) => {
        const uid = e.index + 1;
        if (!selected.has(uid)) return e;
        matched++;
        const f = flagsFromHeaders(headerBlock(e.raw));
        const flags = applyChange(f.flags, add.flags, remove.flags);
        const keywords = applyChange(f.keywords, add.keywords, remove.keywords);
        if (sameSet(flags, f.flags) && sameSet(keywords, f.keywords)) return e;
        changed.push({ uid, flags, keywords, modseq: 0 });
        return withFlagHeaders(e.raw, flags, keywords);
      });
      return { matched, changed, highestModseq: 0 };
    });
  }

  /**
   * Removes the messages flagged `\Deleted` (only those among `uids` when given) by one
   * in-place rewrite. Returns their uids (positions before the expunge).
   * @param {string} mailbox
   * @param {{uids?: number[]}} [opts]
   */
  async expunge(mailbox, opts = {}) {
    const file = this.fileFor(mailbox);
    const only = opts.uids ? new Set(opts.uids.map(Number)) : null;
    return this.withWriteLock(file, mailbox, async (fd) => {
      const expunged = [];
      await rewriteInPlace(file, fd, (e) => {
        const uid = e.index + 1;
        const { flags } = flagsFromHeaders(headerBlock(e.raw));
        if (!flags.includes('\\Deleted') || (only && !only.has(uid))) return e;
        expunged.push(uid);
        return null;
      });
      return { expunged, highestModseq: 0 };
    });
  }
}

/**
 * The messages of an mbox byte stream with their flags; data that is not a message (bytes
 * before the first From_ line, entries over the size limit) is left out.
 * @param {import('node:stream').Readable} input
 */
async function* readEntries(input) {
  const splitter = new MboxSplitter();
  const done = pipeline(input, splitter);
  done.catch(() => {}); // surfaced below
  let uid = 0;
  for await (const entry of splitter) {
    if (entry.error) continue;
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

/**
 * Messages of an mbox file, read without locks (tests, and callers holding the lock).
 * @param {string} file
 */
const readFileEntries = (file) =>
  readEntries(fs.createReadStream(file, { highWaterMark: 1 << 20 }));

module.exports = { MboxBackend, withFlagHeaders, isMboxFile, readEntries: readFileEntries };
