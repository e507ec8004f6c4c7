'use strict';

/*
 * \Recent (RFC 3501 2.3.2): which of a selected mailbox's messages this session is the first
 * to be told of. The claim lives in the store (service claimRecent: one row update under the
 * mailbox lock), so exactly one session, in any process, sees a message as recent: the first
 * SELECT after delivery, APPEND or COPY, or a session that has the mailbox selected when the
 * message arrives. EXAMINE (read-only) looks without claiming (RFC 3501 6.3.2: it must not
 * take \Recent away). Owns view.recent, view.claims and view.claimedTo; never writes SQL.
 */

/**
 * Marks the uids this session now knows of for the first time (all of them at SELECT, the new
 * ones at a sync) as recent where they are this session's.
 * @param {import('./session').Session} s
 * @param {import('./view').MailboxView} v
 * @param {ArrayLike<number>} uids ascending
 * @param {{recentFrom?: number, uidnext: number}|null} [known] the mailbox's status read a
 *   moment ago (SELECT's): with `recentFrom`, EXAMINE peeks and SELECT decides whether to
 *   claim without a statement of their own
 */
async function noteRecent(s, v, uids, known = null) {
  const be = s.backend;
  const can = be.capabilities
    ? be.capabilities.has('claimRecent')
    : typeof be.claimRecent === 'function';
  if (!uids.length || !can) return;
  const max = uids[uids.length - 1];
  // The status SELECT read a moment ago names the first unclaimed uid (`recentFrom`, pg).
  const from = known && known.recentFrom != null ? Number(known.recentFrom) : null;
  if (v.readOnly) {
    const r = from != null ? { from } : await be.claimRecent(v.name, { peek: true });
    for (const u of uids) if (u >= r.from) v.recent.add(u);
    return;
  }
  if (from != null && from >= Number(known.uidnext)) {
    // Every uid below that UIDNEXT was claimed already (by other sessions, or before): nothing
    // is this session's, and no claim is written (a row update and its commit per SELECT of
    // a mailbox whose mail was all seen). Uids from UIDNEXT on are claimed below when the view
    // lists them, or at the sync that brings them.
    v.claimedTo = Math.max(v.claimedTo, Number(known.uidnext));
  }
  if (max >= v.claimedTo) {
    // Claims every unclaimed uid below UIDNEXT, including ones this view has not listed yet
    // (appended after its read): they are this session's when a later sync brings them.
    const r = await be.claimRecent(v.name);
    if (r.to > r.from) v.claims.push([r.from, r.to]);
    v.claimedTo = Math.max(v.claimedTo, r.to);
  }
  if (!v.claims.length) return;
  for (const u of uids) {
    for (const [from, to] of v.claims) {
      if (u >= from && u < to) {
        v.recent.add(u);
        break;
      }
    }
  }
  // New uids come above the view's last one: a claim that ends at or below it is spent.
  const last = v.uids.length ? v.uids[v.uids.length - 1] : 0;
  v.claims = v.claims.filter(([, to]) => to > last + 1);
}

module.exports = { noteRecent };
