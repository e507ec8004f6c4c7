'use strict';

/*
 * Reads a session needs from the mail service, expressed through the service contract only
 * (`scan`, `scanStream`, `status`, `changesSince`). Kept in one place so that a faster
 * service operation can replace a scan here without touching the commands.
 */

const PAGE = 1000;

/**
 * All uids of a mailbox, ascending.
 * @param {object} be a MailBackend
 * @param {string} mailbox
 * @returns {Promise<number[]>}
 */
async function listUids(be, mailbox) {
  const uids = [];
  for await (const row of rowStream(be, mailbox)) uids.push(Number(row.uid));
  return uids;
}

/**
 * Uids above `after`, ascending (new mail since the view was built).
 * @param {object} be
 * @param {string} mailbox
 * @param {number} after
 */
async function uidsAfter(be, mailbox, after) {
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
 * Header rows of a mailbox in uid order. One unpaged scan (a single query on pg, ~20x faster
 * than a cursor stream for a 21,282-message mailbox); the rows of one mailbox fit in memory.
 */
async function* rowStream(be, mailbox) {
  const all = await be.scan(mailbox, { order: 'asc' });
  if (!all.nextCursor) {
    yield* all.rows;
    return;
  }
  // A backend that pages even without a limit: follow its cursor.
  yield* all.rows;
  let cursor = all.nextCursor;
  while (cursor) {
    const page = await be.scan(mailbox, { order: 'asc', limit: PAGE, cursor });
    yield* page.rows;
    cursor = page.nextCursor;
  }
}

/**
 * Header rows of the given uids (missing ones — expunged meanwhile — are absent).
 * @param {object} be
 * @param {string} mailbox
 * @param {number[]} uids ascending
 * @returns {Promise<Map<number, object>>}
 */
async function rowsFor(be, mailbox, uids) {
  const out = new Map();
  if (!uids.length) return out;
  const want = new Set(uids);
  const max = uids[uids.length - 1];
  for await (const row of rowStream(be, mailbox)) {
    const uid = Number(row.uid);
    if (want.has(uid)) out.set(uid, row);
    if (uid >= max) break;
  }
  return out;
}

/**
 * setFlags answers `{matched, changed, highestModseq}` (service README); a bare array of
 * changes is accepted too.
 * @returns {{changed: Array<{uid: number, flags: string[], keywords: string[], modseq: number}>}}
 */
function flagResult(r) {
  if (Array.isArray(r)) return { changed: r };
  return { changed: (r && r.changed) || [] };
}

/** expunge answers `{expunged, highestModseq}`; a bare uid array is accepted too. */
function expungedUids(r) {
  if (Array.isArray(r)) return r.map(Number);
  return ((r && r.expunged) || []).map(Number);
}

/** IMAP flag list of a header row: system flags then keywords. */
function flagsOf(row) {
  return [...(row.flags || []), ...(row.keywords || [])];
}

module.exports = { listUids, uidsAfter, rowStream, rowsFor, flagsOf, flagResult, expungedUids };
