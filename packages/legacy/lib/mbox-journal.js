'use strict';

const fs = require('node:fs');
const fsp = require('node:fs/promises');
const path = require('node:path');
const crypto = require('node:crypto');
const { Readable } = require('node:stream');
const { pipeline } = require('node:stream/promises');
const { MboxSplitter, formatMboxEntry, isFromLine, unescapeMessage } = require('@mailgate/readers');

/*
 * The in-place rewrite of an mbox file and its crash recovery. Owns the journal file next to the
 * mailbox; is called only with the mailbox's write locks held (lock.js) and never takes locks.
 *
 * Why in place: other writers (dovecot-lda, procmail, mutt) open the mbox *before* they wait for
 * its locks and then write through that descriptor. A rewrite that renamed a new file over the
 * mailbox would leave their append in the old, unlinked inode: lost mail (issue 16). Dovecot and
 * UW-IMAP rewrite in place for that reason; so does this module, with a redo journal so that a
 * crash loses nothing:
 *
 *  1. Read the mailbox; from the first message that changes (offset `start`) on, write the new
 *     contents to `.NAME.mailgate-journal-new.lock`, followed by a trailer (the number of messages
 *     before `start`, and a content key of every old message from `start` on), fsync, rename to
 *     `.NAME.mailgate-journal.lock`, fsync the directory: the journal is committed.
 *  2. ftruncate the mailbox to `start`, append the journal's contents, fsync.
 *  3. unlink the journal, fsync the directory.
 *
 * The names end in `.lock`: Dovecot's mbox mailbox list ignores `*.lock` (mbox_is_internal_name),
 * so it never takes them for mailboxes.
 *
 * Recovery (recover(), at the next locked open when a journal is left): a killed rewrite leaves
 * the mailbox as the old file (before 2), the prefix (during the truncate), or the prefix plus
 * part of the new tail, its last message cut short (during the append). Meanwhile another writer
 * may have broken our stale dotlock, appended deliveries, and rewritten status headers (Dovecot
 * adds X-UID, X-IMAPbase, Status, X-Keywords). So recovery is by content, not by offsets: the
 * mailbox's first `prefixCount` messages are kept as they are; after them, every message whose
 * content key (the message without the status-family headers) is one of the journal's new
 * messages or of the old ones it replaces is ours and is dropped, and so is the cut-short copy of
 * a journal message (a prefix of it); everything else is mail that arrived after the crash and is
 * kept. A writer appending after a cut-short line ends that line but writes no empty line before
 * its From_ line (dovecot-lda), so an entry after the prefix that is none of ours is split again
 * at From_ lines at any line start (MboxSplitter anyLine), and a cut inside the journal's first
 * From_ line, which a normal split leaves inside the prefix's last message, is found there and
 * dropped (cutFromLine). The result (prefix, the journal's messages, the arrivals) is written by
 * the same journaled rewrite, so a crash during recovery recovers too. Cost of a crash: the
 * arrivals end up after the rewritten messages, and the rewritten messages get new positions
 * (uids). Nothing is lost; a message whose content is byte-identical to one of ours (a
 * duplicate delivery of it) is taken for ours.
 */

const MAGIC = 'MAILGATE-JOURNAL-1';
// Headers other mbox writers add or rewrite: not part of a message's content key.
const STATUS_HEADER_RE =
  /^(status|x-status|x-keywords|x-uid|x-imapbase|x-imap|content-length|lines|x-mozilla-status2?)[ \t]*:/i;

/** @param {string} file */
function journalPaths(file) {
  const dir = path.dirname(file);
  const base = path.basename(file);
  return {
    dir,
    journal: path.join(dir, `.${base}.mailgate-journal.lock`),
    tmp: path.join(dir, `.${base}.mailgate-journal-new.lock`),
    // what mailgate before the in-place rewrite left after a crash (renamed over the mailbox)
    legacyTmp: path.join(dir, `.${base}.mailgate-new`),
  };
}

/**
 * The message without the status-family headers and without trailing line ends: what stays the
 * same when Dovecot or mailgate rewrite its flags.
 * @param {Buffer} raw
 * @returns {Buffer}
 */
function normalized(raw) {
  let end = raw.length;
  while (end > 0 && (raw[end - 1] === 0x0a || raw[end - 1] === 0x0d)) end--;
  raw = raw.subarray(0, end);
  const parts = [];
  let pos = 0;
  let skipping = false;
  while (pos < raw.length) {
    const nl = raw.indexOf(0x0a, pos);
    const le = nl < 0 ? raw.length : nl + 1;
    const line = raw.subarray(pos, le);
    if (line.length === 1 || (line.length === 2 && line[0] === 0x0d)) {
      parts.push(raw.subarray(pos)); // the empty line and the body, as they are
      return Buffer.concat(parts);
    }
    const folded = line[0] === 0x20 || line[0] === 0x09;
    if (!(folded && skipping)) skipping = STATUS_HEADER_RE.test(line.toString('latin1', 0, 40));
    if (!skipping) parts.push(line);
    pos = le;
  }
  return Buffer.concat(parts);
}

const keyOf = (raw) => crypto.createHash('sha1').update(normalized(raw)).digest('base64');

/**
 * Entries of an mbox byte stream: `{entry, raw}` for each file entry (messages and the data
 * before the first From_ line, which has `entry.error`).
 * @param {import('node:stream').Readable} input
 */
async function* splitStream(input, opts) {
  const splitter = new MboxSplitter(opts);
  const done = pipeline(input, splitter);
  done.catch(() => {}); // surfaced below
  for await (const entry of splitter) yield entry;
  await done;
}

const fileEntries = (file, start = 0, opts) =>
  splitStream(fs.createReadStream(file, { highWaterMark: 1 << 20, start }), opts);

async function fsyncPath(p) {
  const h = await fsp.open(p, 'r');
  try {
    await h.sync();
  } finally {
    await h.close();
  }
}

/* Buffered appends to an open file handle. */
function writer(fh) {
  let buf = [];
  let size = 0;
  const flush = async () => {
    if (!buf.length) return;
    await fh.write(Buffer.concat(buf));
    buf = [];
    size = 0;
  };
  return {
    async push(b) {
      buf.push(b);
      size += b.length;
      if (size >= 1 << 20) await flush();
    },
    flush,
  };
}

/**
 * Writes and commits a journal: `body` is an async iterable of Buffers (the new tail);
 * `trailerOf()` is called once the body is written (the old messages' keys are known then).
 */
async function commitJournal(file, body, trailerOf) {
  const p = journalPaths(file);
  const fh = await fsp.open(p.tmp, 'w', 0o600);
  let bodyLength = 0;
  try {
    const w = writer(fh);
    for await (const b of body) {
      bodyLength += b.length;
      await w.push(b);
    }
    const json = Buffer.from(JSON.stringify({ ...trailerOf(), bodyLength }) + '\n');
    await w.push(json);
    await w.push(Buffer.from(`${MAGIC} ${bodyLength} ${json.length}\n`));
    await w.flush();
    await fh.sync(); // the journal must be on disk before the mailbox is touched
  } finally {
    await fh.close();
  }
  await fsp.rename(p.tmp, p.journal);
  await fsyncPath(p.dir);
}

/** The committed journal's trailer, or null (none, or not a complete journal). */
async function readJournal(file) {
  const { journal } = journalPaths(file);
  let fh;
  try {
    fh = await fsp.open(journal, 'r');
  } catch (err) {
    if (err.code === 'ENOENT') return null;
    throw err;
  }
  try {
    const { size } = await fh.stat();
    const tailLen = Math.min(size, 128);
    const tail = Buffer.alloc(tailLen);
    await fh.read(tail, 0, tailLen, size - tailLen);
    const m = new RegExp(`${MAGIC} (\\d+) (\\d+)\\n$`).exec(tail.toString('latin1'));
    if (!m) return { bad: true };
    const bodyLength = Number(m[1]);
    const jsonLength = Number(m[2]);
    const json = Buffer.alloc(jsonLength);
    await fh.read(json, 0, jsonLength, bodyLength);
    return { ...JSON.parse(json.toString('utf8')), bodyLength };
  } catch {
    return { bad: true };
  } finally {
    await fh.close();
  }
}

const journalBody = (file, bodyLength) =>
  bodyLength
    ? fs.createReadStream(journalPaths(file).journal, { start: 0, end: bodyLength - 1 })
    : Readable.from([]);

/* Steps 2 and 3: the committed journal's body replaces the mailbox from `start` on. */
async function applyJournal(file, fd, trailer) {
  fs.ftruncateSync(fd, trailer.start);
  let pos = trailer.start;
  for await (const chunk of journalBody(file, trailer.bodyLength)) {
    let off = 0;
    while (off < chunk.length) {
      off += fs.writeSync(fd, chunk, off, chunk.length - off, pos + off);
    }
    pos += chunk.length;
  }
  fs.fsyncSync(fd);
  const p = journalPaths(file);
  await fsp.unlink(p.journal);
  await fsyncPath(p.dir);
}

/**
 * Rewrites the mailbox in place through `fn(e)`, called for every message in file order with
 * `{entry, raw, index}` (index: 0-based message number): return `e` to keep it as it is, a
 * Buffer to replace its message bytes, null to drop it. Unchanged messages are copied byte for
 * byte (formatMboxEntry), and nothing before the first change is rewritten at all.
 * Call with the mailbox's write locks held; `fd` is the locked descriptor (read-write).
 * @param {string} file
 * @param {number} fd
 * @param {(e: {entry: object, raw: Buffer, index: number}) => object|Buffer|null} fn
 * @returns {Promise<boolean>} whether the file changed
 */
async function rewriteInPlace(file, fd, fn) {
  const oldKeys = [];
  let start = -1;
  let prefixCount = 0;
  // The last entry before the first change (a message, or the data before the first one): its
  // key goes in the trailer (recover: a cut inside the first new From_ line).
  let lastRaw = null;
  let index = 0;
  async function* tail() {
    for await (const entry of fileEntries(file)) {
      let out = null;
      if (entry.error) {
        if (start >= 0) out = formatMboxEntry(entry);
        else lastRaw = entry.raw; // data before the first message: kept as the prefix
      } else {
        const e = { entry, raw: entry.raw, index: index++ };
        const r = fn(e);
        const changed = r !== e;
        if (start < 0 && changed) start = entry.offset;
        if (start < 0) {
          prefixCount++;
          lastRaw = entry.raw;
          continue;
        }
        oldKeys.push(keyOf(entry.raw));
        if (r === e) out = formatMboxEntry(entry);
        else if (r) out = formatMboxEntry({ ...entry, raw: r, original: null });
      }
      if (out) yield out;
    }
  }
  // tail() yields nothing before the first change: peek, so that no change writes no journal.
  const it = tail()[Symbol.asyncIterator]();
  const first = await it.next();
  if (start < 0) return false;
  async function* body() {
    if (first.done) return;
    yield first.value;
    for (let n = await it.next(); !n.done; n = await it.next()) yield n.value;
  }
  const st = fs.fstatSync(fd);
  await commitJournal(file, body(), () => ({
    start,
    prefixCount,
    lastKey: lastRaw ? keyOf(lastRaw) : null,
    oldKeys,
    dev: st.dev,
    ino: st.ino,
  }));
  const committed = await readJournal(file);
  await applyJournal(file, fd, committed);
  return true;
}

/*
 * A fragment is the cut-short copy of a journal message left by a killed append: a prefix of it
 * (its last, possibly cut, line left out), or the whole message followed only by the start of the
 * next From_ line.
 */
function isFragmentOf(a, b) {
  // Another writer that appends after the cut ends its line first, and Dovecot may add its
  // status headers after it (normalized drops those, not the line end before them).
  let end = a.length;
  while (end > 0 && (a[end - 1] === 0x0a || a[end - 1] === 0x0d)) end--;
  a = a.subarray(0, end);
  const lastNl = a.lastIndexOf(0x0a);
  const whole = lastNl < 0 ? Buffer.alloc(0) : a.subarray(0, lastNl + 1);
  if (whole.length <= b.length && b.subarray(0, whole.length).equals(whole)) return true;
  if (a.length > b.length && a.subarray(0, b.length).equals(b)) {
    const rest = a.toString('latin1', b.length);
    return /^(\r?\n)*(F|Fr|Fro|From|From [^\n]*)?$/.test(rest);
  }
  return false;
}

/* The journal body's first line (a From_ line), without its line ending; null when empty. */
async function journalFirstLine(file, bodyLength) {
  if (!bodyLength) return null;
  const head = await readRange(journalPaths(file).journal, 0, Math.min(bodyLength, 4096));
  const nl = head.indexOf(0x0a);
  const line = nl < 0 ? head : head.subarray(0, nl);
  return line.length && line[line.length - 1] === 0x0d ? line.subarray(0, -1) : line;
}

async function readRange(file, start, end) {
  const fh = await fsp.open(file, 'r');
  try {
    const buf = Buffer.alloc(end - start);
    const { bytesRead } = await fh.read(buf, 0, buf.length, start);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/* The first message of an mbox byte string read on its own (its own variant), or null. */
async function firstEntryOf(bytes, opts) {
  for await (const e of splitStream(Readable.from([bytes]), opts)) if (!e.error) return e;
  return null;
}

/*
 * Where, in `bytes` (the prefix's last entry, whose content key is no longer `lastKey`), a
 * cut-short copy of `firstLine` starts: a line that is a non-empty prefix of it, followed
 * (after any empty lines) by the end or by a valid From_ line (an arrival), and before which
 * the entry is again the message the rewrite kept (key `lastKey`). -1 when there is none.
 */
async function cutFromLine(bytes, firstLine, lastKey, variant, garbage) {
  for (let i = bytes.indexOf(0x46, 1); i > 0; i = bytes.indexOf(0x46, i + 1)) {
    if (bytes[i - 1] !== 0x0a) continue;
    const nl = bytes.indexOf(0x0a, i);
    const le = nl < 0 ? bytes.length : nl + 1;
    let line = bytes.subarray(i, nl < 0 ? bytes.length : nl);
    if (line.length && line[line.length - 1] === 0x0d) line = line.subarray(0, -1);
    if (!line.length || line.length > firstLine.length) continue;
    if (!firstLine.subarray(0, line.length).equals(line)) continue;
    // empty lines may follow (a writer that separates its delivery with one)
    let at = le;
    while (bytes[at] === 0x0a || (bytes[at] === 0x0d && bytes[at + 1] === 0x0a))
      at += bytes[at] === 0x0a ? 1 : 2;
    if (at < bytes.length) {
      const next = bytes.indexOf(0x0a, at);
      if (!isFromLine(bytes.subarray(at, next < 0 ? bytes.length : next + 1))) continue;
    }
    // the entry up to the line, read as a reader reads it (data before the first message: as is)
    const before = garbage
      ? { raw: bytes.subarray(0, i) }
      : await firstEntryOf(bytes.subarray(0, i), { variant });
    if (before && keyOf(before.raw) === lastKey) return i;
  }
  return -1;
}

/*
 * The bytes of one or more file entries read as one message (From_ lines inside it included):
 * its content as a reader would unescape it, for keys and fragment tests only.
 */
function oneMessage(bytes, variant) {
  const nl = bytes.indexOf(0x0a);
  return unescapeMessage(nl < 0 ? Buffer.alloc(0) : bytes.subarray(nl + 1), variant);
}

/*
 * A run of consecutive entries after the prefix that are none of ours, split where arrivals
 * may start: at From_ lines at any line start (an arrival appended right after a cut-short
 * line of ours is read as part of it, without the empty line a From_ line needs). Returns the
 * run's bytes, its parts (entries, offsets in those bytes) and its fronts: for each part
 * boundary from the last to the first, and the whole run, the content before it read as one
 * message. The longest front that is ours is dropped (a From_ line in the body of one of our
 * messages is not the start of an arrival); the parts after it are arrivals or ours.
 */
async function splitRun(run) {
  const variant = run[0].variant;
  const bytes =
    run.length === 1 ? formatMboxEntry(run[0]) : Buffer.concat(run.map(formatMboxEntry));
  const parts = [];
  for await (const part of splitStream(Readable.from([bytes]), { anyLine: true, variant })) {
    if (!part.error) parts.push(part);
  }
  const fronts = [{ n: parts.length, raw: oneMessage(bytes, variant) }];
  for (let n = parts.length - 1; n >= 1; n--) {
    fronts.push({ n, raw: oneMessage(bytes.subarray(0, parts[n].offset), variant) });
  }
  return { parts, fronts };
}

/**
 * Finishes or redoes a rewrite left by a killed process (see the module comment). Call with the
 * mailbox's write locks held. Removes an uncommitted journal and the old temporary file.
 * @param {string} file
 * @param {number} fd the locked descriptor
 * @param {{warn: Function, error: Function}} logger
 * @returns {Promise<null|{kept: number, arrivals: number, fragments: number}>}
 */
async function recover(file, fd, logger) {
  const p = journalPaths(file);
  await fsp.unlink(p.tmp).catch(() => {});
  await fsp.unlink(p.legacyTmp).catch(() => {});
  const j = await readJournal(file);
  if (!j) return null;
  if (j.bad) {
    // Only a committed (renamed) journal is read; a damaged one is kept aside, never applied.
    const aside = `${p.journal.replace(/\.lock$/, '')}-damaged-${Date.now()}.lock`;
    await fsp.rename(p.journal, aside);
    logger.error({ mailbox: path.basename(file) }, 'mbox journal damaged; kept aside');
    return null;
  }
  const newCount = new Map();
  const jMessages = [];
  for await (const entry of splitStream(journalBody(file, j.bodyLength))) {
    if (entry.error) continue;
    const k = keyOf(entry.raw);
    newCount.set(k, (newCount.get(k) || 0) + 1);
    jMessages.push(k);
  }
  const oldCount = new Map();
  for (const k of j.oldKeys) oldCount.set(k, (oldCount.get(k) || 0) + 1);
  const take = (m, k) => {
    const n = m.get(k) || 0;
    if (!n) return false;
    m.set(k, n - 1);
    return true;
  };

  // The prefix: the mailbox's first prefixCount messages (and any data before the first one),
  // split as every reader splits the file.
  let messages = 0;
  let headEnd = 0;
  let last = null;
  for await (const entry of fileEntries(file)) {
    if (!entry.error && messages++ >= j.prefixCount) break;
    if (entry.error && messages > 0) continue;
    headEnd = entry.offset + entry.length;
    last = entry;
  }
  // A cut inside the first journal message's From_ line leaves the start of that line after the
  // prefix, and a writer appending after it ends the line: the prefix's last entry then holds
  // it (and the arrivals, no empty line before them). Found by the key of that message, which
  // the journal records (journals written before it did are recovered without this step).
  let fragments = 0;
  let cut = -1;
  if (last && j.lastKey && keyOf(last.raw) !== j.lastKey) {
    const firstLine = await journalFirstLine(file, j.bodyLength);
    const bytes = firstLine && (await readRange(file, last.offset, headEnd));
    if (firstLine) {
      cut = await cutFromLine(bytes, firstLine, j.lastKey, last.variant, Boolean(last.error));
    }
  }
  if (cut >= 0) {
    headEnd = last.offset + cut;
    fragments++;
  }
  // After the prefix: our messages and the arrivals. Entries that are ours (by content key)
  // are dropped as they are. A run of entries that are not is split again (splitRun): its
  // longest front that is ours (one of our messages, or a cut-short copy of one) is dropped,
  // the parts after it are matched one by one. Fragment tests read the journal once for all.
  const candidates = [];
  const restKeys = [];
  const runs = [];
  let run = null;
  for await (const entry of fileEntries(file, headEnd)) {
    // The cut line itself (read on its own from headEnd, counted above), or an entry over the
    // splitter's size limit, whose bytes are not kept.
    if (entry.error) continue;
    const k = keyOf(entry.raw);
    restKeys.push(k);
    if (take(newCount, k) || take(oldCount, k)) {
      run = null;
      continue;
    }
    if (!run) runs.push((run = []));
    run.push(entry);
  }
  const splits = [];
  for (const r of runs) splits.push(await splitRun(r));
  const tests = splits.flatMap((sp) => sp.fronts.map((f) => normalized(f.raw)));
  const ours = new Array(tests.length).fill(false);
  if (tests.length) {
    for await (const entry of splitStream(journalBody(file, j.bodyLength))) {
      if (entry.error) continue;
      const b = normalized(entry.raw);
      tests.forEach((a, i) => {
        if (!ours[i] && isFragmentOf(a, b)) ours[i] = true;
      });
    }
  }
  let t = 0;
  for (const sp of splits) {
    let from = 0;
    for (const f of sp.fronts) {
      const k = keyOf(f.raw);
      if (!from && (ours[t] || newCount.get(k) || oldCount.get(k))) {
        if (!take(newCount, k) && !take(oldCount, k)) fragments++;
        from = f.n;
      }
      t++;
    }
    for (const part of sp.parts.slice(from)) {
      const k = keyOf(part.raw);
      restKeys.push(k);
      if (take(newCount, k) || take(oldCount, k)) continue;
      candidates.push(part);
    }
  }
  // Candidates: arrivals, and at most a cut-short journal message. Compare with each one.
  const arrivals = [];
  if (candidates.length) {
    const norms = candidates.map((e) => normalized(e.raw));
    const frag = new Set();
    for await (const entry of splitStream(journalBody(file, j.bodyLength))) {
      if (entry.error) continue;
      const b = normalized(entry.raw);
      norms.forEach((a, i) => {
        if (!frag.has(i) && isFragmentOf(a, b)) frag.add(i);
      });
    }
    candidates.forEach((e, i) => (frag.has(i) ? fragments++ : arrivals.push(e)));
  }
  const st = fs.fstatSync(fd);
  async function* body() {
    let end = Buffer.alloc(0);
    for await (const chunk of journalBody(file, j.bodyLength)) {
      end = Buffer.concat([end, chunk.subarray(-2)]).subarray(-2);
      yield chunk;
    }
    // an arrival's From_ line must follow an empty line (RFC 4155)
    if (arrivals.length && end.length && end[end.length - 1] !== 0x0a) yield Buffer.from('\n\n');
    else if (arrivals.length && end.length && end[0] !== 0x0a) yield Buffer.from('\n');
    for (const e of arrivals) {
      const b = formatMboxEntry(e);
      yield b;
      // A part split off after a cut line has no empty line after it: the next arrival's
      // From_ line must follow one.
      const n = b.length;
      if (n && b[n - 1] !== 0x0a) yield Buffer.from('\n\n');
      else if (n && !(b[n - 2] === 0x0a || (b[n - 2] === 0x0d && b[n - 3] === 0x0a)))
        yield Buffer.from(b[n - 2] === 0x0d ? '\r\n' : '\n');
    }
  }
  // The new journal replaces the old one by rename: at every instant one of them is committed.
  await commitJournal(file, body(), () => ({
    start: headEnd,
    prefixCount: j.prefixCount,
    lastKey: j.lastKey || null,
    oldKeys: restKeys,
    dev: st.dev,
    ino: st.ino,
  }));
  await applyJournal(file, fd, await readJournal(file));
  const report = { kept: jMessages.length, arrivals: arrivals.length, fragments };
  logger.warn({ mailbox: path.basename(file), ...report }, 'mbox rewrite recovered after a crash');
  return report;
}

/** @param {string} file @returns {boolean} whether a journal or temporary file is left */
function needsRecovery(file) {
  const p = journalPaths(file);
  return fs.existsSync(p.journal) || fs.existsSync(p.tmp) || fs.existsSync(p.legacyTmp);
}

module.exports = {
  rewriteInPlace,
  recover,
  needsRecovery,
  journalPaths,
  normalized,
  keyOf,
  isFragmentOf,
};
