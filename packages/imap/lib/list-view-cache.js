'use strict';

/*
 * The IMAP server's bounded in-process copy of packed list-view reads (issue 35.3): what the
 * store's getImapFieldsRange returned for a uid range of a mailbox (one kept value of its
 * messages, the list-view header lines or the ENVELOPEs, joined into one latin1 text, their
 * uids, sizes and offsets), keyed by user, mailbox scope (cache.js mailboxScope: identity and
 * UIDVALIDITY, plus the value read) and range. A uid's lines
 * never change, so nothing goes stale; a message kept after the read (a backfill) is missing
 * from it and derived by FETCH, as any message without kept lines. Owns the reads it holds and
 * their accounting; never reads the store, never decides visibility (FETCH answers only the
 * uids of the session's view).
 *
 * The same rules as the body cache (body-cache.js): bounded in bytes, not entries or string
 * lengths (`maxBytes` over all users, MAILGATE_IMAP_LIST_VIEW_CACHE_MB); one user at most a
 * quarter of it (the brief: one user's heavy work never takes more than its share), so a user
 * listing many large mailboxes evicts its own oldest reads, not another user's; no read over
 * the user's share is kept. One lru-cache per user, users in recency order: past the total,
 * the least recently used user gives up its oldest reads first. Ranges of one mailbox may
 * overlap (a list view of 1:* after one of 100:*): a read covering others replaces them, a read
 * another one covers is not kept twice, so the same message is not counted (or held) twice
 * for one reason.
 */

const { LRUCache } = require('lru-cache');

// Bytes counted per read beside its text and arrays: key, range record and the LRU's slots.
const ENTRY_OVERHEAD = 256;
// One user's share of the whole cache.
const USER_SHARE = 4;

/**
 * Bytes a JavaScript string takes in memory: one per character when every character fits in
 * one byte (V8's one-byte strings; the kept lines are latin1, so this is the usual case), two
 * otherwise.
 * @param {string} s
 */
function textBytes(s) {
  // eslint-disable-next-line no-control-regex
  return /[^\u0000-\u00ff]/.test(s) ? 2 * s.length : s.length;
}

/**
 * Bytes one packed read holds: one packed value, or `{parts}`, a read kept as the parts it was
 * written from (meta.js packedFields: no copy to join them).
 * @param {{uids: ArrayLike<number>, sizes: ArrayLike<number>, starts: ArrayLike<number>, ends: ArrayLike<number>, text: string}|{parts: object[]}} p
 */
function packedBytes(p) {
  if (p.parts) {
    let n = ENTRY_OVERHEAD;
    for (const q of p.parts) n += packedBytes(q) - ENTRY_OVERHEAD;
    return n;
  }
  // Typed arrays say their bytes; plain arrays of small integers take 8 bytes a slot.
  const arr = (a) => (ArrayBuffer.isView(a) ? a.byteLength : 8 * a.length);
  const starts = p.starts ? arr(p.starts) : 0;
  return textBytes(p.text) + arr(p.uids) + arr(p.sizes) + starts + arr(p.ends) + ENTRY_OVERHEAD;
}

class ListViewCache {
  /**
   * @param {{maxBytes: number, userBytes?: number}} o maxBytes 0 disables; userBytes defaults
   *   to maxBytes / 4 (never more than maxBytes)
   */
  constructor(o) {
    this.maxBytes = Math.max(0, Math.floor(o.maxBytes || 0));
    this.userBytes = Math.min(
      this.maxBytes,
      Math.floor(o.userBytes == null ? this.maxBytes / USER_SHARE : o.userBytes),
    );
    this.bytes = 0;
    // user → {lru: LRUCache<key, entry>, scopes: Map<scope, Set<entry>>}, least recently
    // used user first. `scopes` finds the reads of one mailbox without a walk of all of them.
    this.users = new Map();
  }

  /** Whether anything may be kept (MAILGATE_IMAP_LIST_VIEW_CACHE_MB=0: no). */
  get enabled() {
    return this.userBytes > ENTRY_OVERHEAD;
  }

  /**
   * A kept read of this mailbox that covers uids lo..hi, or undefined.
   * @param {string} user
   * @param {string} scope mailboxScope(user, view)
   * @param {number} lo
   * @param {number} hi
   * @returns {{uids: ArrayLike<number>, sizes: ArrayLike<number>, starts: ArrayLike<number>, ends: ArrayLike<number>, text: string}|undefined}
   */
  get(user, scope, lo, hi) {
    const u = this.users.get(user);
    const mine = u && u.scopes.get(scope);
    if (!mine) return undefined;
    for (const e of mine) {
      if (e.lo <= lo && e.hi >= hi) {
        u.lru.get(e.key); // most recently used within the user
        this.users.delete(user);
        this.users.set(user, u); // and the user, among users
        return e.packed;
      }
    }
    return undefined;
  }

  /**
   * Keeps a packed read of uids lo..hi of one mailbox.
   * @param {string} user
   * @param {string} scope mailboxScope(user, view)
   * @param {number} lo
   * @param {number} hi
   * @param {{uids: ArrayLike<number>, sizes: ArrayLike<number>, starts: ArrayLike<number>, ends: ArrayLike<number>, text: string}} packed
   * @returns {boolean} whether it is kept (false: over the user's share, or disabled)
   */
  set(user, scope, lo, hi, packed) {
    const size = packedBytes(packed);
    if (!this.enabled || size > this.userBytes) return false;
    let u = this.users.get(user);
    if (u) this.users.delete(user);
    else u = this.newUser();
    this.users.set(user, u); // most recently used user last
    let mine = u.scopes.get(scope);
    if (!mine) u.scopes.set(scope, (mine = new Set()));
    for (const e of [...mine]) {
      // Another read already covers it (two sessions read the same range at once): one copy.
      if (e.lo <= lo && e.hi >= hi) return true;
      // It covers an older read: that one is no longer needed.
      if (lo <= e.lo && hi >= e.hi) u.lru.delete(e.key);
    }
    const key = `${scope}\0${lo}-${hi}`;
    const entry = { key, scope, lo, hi, packed, size };
    mine.add(entry);
    u.scopes.set(scope, mine);
    this.bytes += size;
    u.lru.set(key, entry); // past the user's share, that user's oldest reads go (dispose)
    for (const [name, other] of this.users) {
      if (this.bytes <= this.maxBytes) break;
      while (this.bytes > this.maxBytes && other.lru.size) other.lru.pop();
      if (!other.lru.size) this.users.delete(name);
    }
    return true;
  }

  /** @private A user's reads: an LRU bounded by the share, and the index by mailbox. */
  newUser() {
    const u = { lru: null, scopes: new Map() };
    u.lru = new LRUCache({
      maxSize: this.userBytes,
      sizeCalculation: (e) => e.size,
      dispose: (e) => {
        this.bytes -= e.size;
        const mine = u.scopes.get(e.scope);
        if (mine) {
          mine.delete(e);
          if (!mine.size) u.scopes.delete(e.scope);
        }
      },
    });
    return u;
  }

  /**
   * Whether anything of this user is kept.
   * @param {string} user
   */
  holds(user) {
    return this.users.has(user);
  }

  /**
   * Drops every read of the user's mailbox with this identity (a deleted mailbox), whatever
   * its UIDVALIDITY.
   * @param {string} user
   * @param {string} identity the backend's identity of the mailbox (status().identity)
   */
  dropMailbox(user, identity) {
    const u = this.users.get(user);
    if (!u) return;
    const mark = `\0id:${identity}\0`;
    for (const [scope, mine] of [...u.scopes]) {
      if (scope.includes(mark)) for (const e of [...mine]) u.lru.delete(e.key);
    }
    if (!u.lru.size) this.users.delete(user);
  }

  /**
   * Bytes held, in total and per user, and the reads kept (tests, diagnostics).
   * @returns {{bytes: number, entries: number, users: Map<string, number>}}
   */
  stats() {
    const users = new Map();
    let entries = 0;
    for (const [name, u] of this.users) {
      users.set(name, u.lru.calculatedSize);
      entries += u.lru.size;
    }
    return { bytes: this.bytes, entries, users };
  }
}

module.exports = { ListViewCache, packedBytes, textBytes, ENTRY_OVERHEAD };
