'use strict';

/*
 * Reads a session needs from the mail service, expressed through the service contract only
 * (`scanList`, `scan`, `status`, `changesSince`). Kept in one place so that a faster
 * service operation can replace a scan here without touching the commands.
 *
 * The session's rows are list rows (service scanList: uid, flags, keywords, the dates, size,
 * modseq, sender, subject): every field SELECT, FETCH, STORE and SEARCH read from a row is in
 * them. On pg they come from the list-view cache and its persisted snapshot, so the first
 * SELECT after a restart reads one snapshot row and a delta, not 21,282 full header rows
 * (0.9-1.1 s cold on the large Enron mailbox, docs/benchmarks.md).
 */

const PAGE = 1000;

/**
 * All uids of a mailbox, ascending (UIDs are 32-bit, RFC 3501 9).
 * @param {object} be a MailBackend
 * @param {string} mailbox
 * @returns {Promise<Uint32Array>}
 */
async function listUids(be, mailbox) {
  const rows = await allRows(be, mailbox);
  const uids = new Uint32Array(rows.length);
  for (let i = 0; i < rows.length; i++) uids[i] = Number(rows[i].uid);
  return uids;
}

/**
 * Uids above `after`, ascending (new mail since the view was built).
 * @param {object} be
 * @param {string} mailbox
 * @param {number} after
 */
async function uidsAfter(be, mailbox, after) {
  if (typeof be.scanList === 'function') {
    // The list view (uid order, exact by modseq, caught up by the rows changed since): new
    // mail costs no read of full header rows. A page of `scan` would be answered from the
    // webmail's full-row cache and, for an uncached mailbox, start loading every full row
    // in the background (200 IDLE sessions, after an append: 270 MB RSS before, 192 MB now).
    const rows = await be.scanList(mailbox);
    const out = [];
    for (let i = firstAtLeast(rows, after + 1); i < rows.length; i++) out.push(Number(rows[i].uid));
    return out;
  }
  const out = [];
  let cursor;
  for (;;) {
    const page = await be.scan(mailbox, { order: 'desc', limit: 200, cursor });
    let done = !page.nextCursor;
    for (const row of page.rows) {
      if (Number(row.uid) <= after) {
        done = true;
        break;
      }
      out.push(Number(row.uid));
    }
    if (done) break;
    cursor = page.nextCursor;
  }
  return out.sort((a, b) => a - b);
}

/**
 * List rows of a mailbox in uid order. One unpaged read (the list-view cache on pg); the rows
 * of one mailbox fit in memory.
 */
async function* rowStream(be, mailbox) {
  yield* await allRows(be, mailbox);
}

/**
 * List rows of a mailbox in uid order, as one array: what rowStream yields, without an async
 * iteration step per row (~0.3 µs each: 7 ms of a 21,282-message FETCH or SEARCH).
 * @param {object} be
 * @param {string} mailbox
 * @param {object|null} [known] the mailbox's status read a moment ago in the same command
 *   (session.knownStatus): the service may answer from its cache without reading it again
 * @returns {Promise<ReadonlyArray<object>>}
 */
async function allRows(be, mailbox, known = null) {
  if (typeof be.scanList === 'function') return be.scanList(mailbox, { known });
  const all = await be.scan(mailbox, { order: 'asc' });
  if (!all.nextCursor) return all.rows;
  // A backend that pages even without a limit: follow its cursor.
  const rows = [...all.rows];
  let cursor = all.nextCursor;
  while (cursor) {
    const page = await be.scan(mailbox, { order: 'asc', limit: PAGE, cursor });
    for (const r of page.rows) rows.push(r);
    cursor = page.nextCursor;
  }
  return rows;
}

/** Index of the first row (uid order) whose uid is >= uid; rows.length when none is. */
function firstAtLeast(rows, uid) {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (Number(rows[mid].uid) < uid) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Header rows of the given uids (missing ones — expunged meanwhile — are absent).
 * @param {object} be
 * @param {string} mailbox
 * @param {number[]} uids ascending
 * @param {object|null} [known] as allRows
 * @returns {Promise<Map<number, object>>}
 */
async function rowsFor(be, mailbox, uids, known = null) {
  const out = new Map();
  if (!uids.length) return out;
  const rows = await allRows(be, mailbox, known);
  if (uids.length * 8 < rows.length) {
    // A few uids (one message, a short set): binary search instead of a pass over the mailbox.
    for (const uid of uids) {
      const i = firstAtLeast(rows, uid);
      if (i < rows.length && Number(rows[i].uid) === uid) out.set(uid, rows[i]);
    }
    return out;
  }
  const want = new Set(uids);
  const max = uids[uids.length - 1];
  for (const row of rows) {
    const uid = Number(row.uid);
    if (want.has(uid)) out.set(uid, row);
    if (uid >= max) break;
  }
  return out;
}

/**
 * setFlags answers `{matched, changed, highestModseq}` (service README); a bare array of
 * changes is accepted too (highestModseq null: unknown).
 * @returns {{changed: Array<{uid: number, flags: string[], keywords: string[], modseq: number}>, highestModseq: number|null}}
 */
function flagResult(r) {
  if (Array.isArray(r)) return { changed: r, highestModseq: null };
  return { changed: (r && r.changed) || [], highestModseq: modseqOf(r) };
}

/**
 * expunge answers `{expunged, highestModseq}`; a bare uid array is accepted too
 * (highestModseq null: unknown).
 * @returns {{uids: number[], highestModseq: number|null}}
 */
function expungeResult(r) {
  if (Array.isArray(r)) return { uids: r.map(Number), highestModseq: null };
  return { uids: ((r && r.expunged) || []).map(Number), highestModseq: modseqOf(r) };
}

function modseqOf(r) {
  return r && r.highestModseq != null ? Number(r.highestModseq) : null;
}

/**
 * IMAP flag list of a header row: system flags, then keywords, then `\Recent` when the row's
 * uid is in `recent` (the session's view.recent: RFC 3501 2.3.2 session state, never stored
 * on the row).
 * @param {object} row
 * @param {Set<number>|null} [recent]
 */
function flagsOf(row, recent = null) {
  const out = [...(row.flags || []), ...(row.keywords || [])];
  if (recent && recent.size && recent.has(Number(row.uid))) out.push('\\Recent');
  return out;
}

module.exports = {
  listUids,
  uidsAfter,
  rowStream,
  allRows,
  rowsFor,
  flagsOf,
  flagResult,
  expungeResult,
};
