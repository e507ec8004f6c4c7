'use strict';

/*
 * The IMAP server's bounded in-process copy of message bytes (issue 35.4, "fetch one"): the CRLF
 * form FETCH serves (toCrlf of the stored bytes), keyed by user, mailbox identity, UIDVALIDITY
 * and uid (cache.js mailboxScope). A message's bytes under a uid never change (RFC 3501
 * 2.3.1.1), so nothing goes stale; entries are only dropped to give memory back (an expunge a
 * session announced, a mailbox this server deleted) or to keep the bounds. Owns the bytes it
 * holds and their accounting; never reads the store, never decides visibility (FETCH serves
 * only uids of the session's view, and fills only with bytes it served).
 *
 * Bounds (sizes, not entry counts): at most `maxBytes` over all users; at most a quarter of it
 * for one user (the brief: one user's heavy work never takes more than its share), so a client
 * downloading a whole mailbox evicts its own oldest messages, not everyone's; no entry over
 * `maxEntryBytes`. One lru-cache per user (its maxSize is the share), users in recency order:
 * past the total, the least recently used user gives up its oldest entries first.
 */

const { LRUCache } = require('lru-cache');

// Bytes counted per entry beside the message: its key string and the LRU's slots.
const ENTRY_OVERHEAD = 160;
// One user's share of the whole cache.
const USER_SHARE = 4;
const MAX_ENTRY_BYTES = 1024 * 1024;

// A Buffer is kept as it is (no copy) when it is the whole of its allocation but for this
// fraction: FETCH's CRLF form (crlf.js `own`) and store-decoded messages (raw-codec.js sizes
// the decoder's output to the message) are. Anything else (a slice of Node's shared pool or
// of a driver's larger buffer, which would keep that alive uncounted) is copied.
const SLACK = 8;

/** Bytes an entry holds: its whole allocation when it is kept as it is. */
const sizeOf = (buf) => Math.max(buf.length, buf.buffer.byteLength) + ENTRY_OVERHEAD;

/**
 * The Buffer to keep for `wire`: itself when it owns its allocation (one byte in SLACK of it
 * unused at most), else a copy that does.
 * @param {Buffer} wire
 * @returns {Buffer}
 */
function keepable(wire) {
  const whole = wire.buffer.byteLength;
  if (wire.byteOffset === 0 && whole - wire.length <= wire.length / SLACK) return wire;
  const copy = Buffer.allocUnsafeSlow(wire.length);
  wire.copy(copy);
  return copy;
}

class BodyCache {
  /**
   * @param {{maxBytes: number, userBytes?: number, maxEntryBytes?: number}} o maxBytes 0
   *   disables; userBytes defaults to maxBytes / 4; maxEntryBytes to 1 MiB (at most userBytes)
   */
  constructor(o) {
    this.maxBytes = Math.max(0, Math.floor(o.maxBytes || 0));
    this.userBytes = Math.min(
      this.maxBytes,
      Math.floor(o.userBytes == null ? this.maxBytes / USER_SHARE : o.userBytes),
    );
    this.maxEntryBytes = Math.min(o.maxEntryBytes || MAX_ENTRY_BYTES, this.userBytes);
    this.bytes = 0;
    this.users = new Map(); // user → LRUCache, least recently used user first
  }

  /** Whether anything may be cached at all (MAILGATE_IMAP_BODY_CACHE_MB=0: no). */
  get enabled() {
    return this.maxEntryBytes > ENTRY_OVERHEAD;
  }

  /**
   * The cached CRLF bytes of one message, or undefined.
   * @param {string} user
   * @param {string} scope mailboxScope(user, view)
   * @param {number} uid
   * @returns {Buffer|undefined}
   */
  get(user, scope, uid) {
    const c = this.users.get(user);
    if (!c) return undefined;
    const wire = c.get(`${scope}\0${uid}`);
    if (wire) {
      // The most recently used user last: past the total, the least recently used gives way.
      this.users.delete(user);
      this.users.set(user, c);
    }
    return wire;
  }

  /**
   * Keeps a message's CRLF bytes: the Buffer itself when it owns its allocation (keepable), a
   * private copy otherwise (a Buffer from the driver may be a slice of a larger pooled
   * allocation, which the cache would otherwise keep alive uncounted). Nobody writes into a
   * message's bytes once read, so the FETCH that sends them and the cache share one Buffer.
   * @param {string} user
   * @param {string} scope mailboxScope(user, view)
   * @param {number} uid
   * @param {Buffer} wire
   * @returns {boolean} whether it was kept
   */
  set(user, scope, uid, wire) {
    if (wire.length + ENTRY_OVERHEAD > this.maxEntryBytes) return false;
    const key = `${scope}\0${uid}`;
    let c = this.users.get(user);
    if (c && c.has(key)) {
      this.users.delete(user);
      this.users.set(user, c);
      return true;
    }
    const kept = keepable(wire);
    if (sizeOf(kept) > this.maxEntryBytes) return false;
    if (c) {
      this.users.delete(user);
    } else {
      c = new LRUCache({
        maxSize: this.userBytes,
        sizeCalculation: sizeOf,
        dispose: (v) => {
          this.bytes -= sizeOf(v);
        },
      });
    }
    this.users.set(user, c); // most recently used user last
    c.set(key, kept); // past the user's share, that user's oldest entries go (dispose)
    this.bytes += sizeOf(kept);
    for (const [u, other] of this.users) {
      if (this.bytes <= this.maxBytes) break;
      while (this.bytes > this.maxBytes && other.size) other.pop();
      if (!other.size) this.users.delete(u);
    }
    return true;
  }

  /**
   * Whether anything of this user is cached.
   * @param {string} user
   */
  holds(user) {
    return this.users.has(user);
  }

  /**
   * Drops uids of one mailbox (an expunge the session announced).
   * @param {string} user
   * @param {string} scope
   * @param {Iterable<number>} uids
   */
  dropUids(user, scope, uids) {
    const c = this.users.get(user);
    if (!c) return;
    for (const uid of uids) c.delete(`${scope}\0${uid}`);
    if (!c.size) this.users.delete(user);
  }

  /**
   * Drops every entry of the user's mailbox with this identity (a deleted mailbox), whatever
   * its UIDVALIDITY.
   * @param {string} user
   * @param {string} identity the backend's identity of the mailbox (status().identity)
   */
  dropMailbox(user, identity) {
    const c = this.users.get(user);
    if (!c) return;
    const mark = `\0id:${identity}\0`;
    for (const key of [...c.keys()]) if (key.includes(mark)) c.delete(key);
    if (!c.size) this.users.delete(user);
  }

  /**
   * Bytes held, in total and per user (tests, diagnostics).
   * @returns {{bytes: number, entries: number, users: Map<string, number>}}
   */
  stats() {
    const users = new Map();
    let entries = 0;
    for (const [u, c] of this.users) {
      users.set(u, c.calculatedSize);
      entries += c.size;
    }
    return { bytes: this.bytes, entries, users };
  }
}

module.exports = { BodyCache, ENTRY_OVERHEAD, keepable };
