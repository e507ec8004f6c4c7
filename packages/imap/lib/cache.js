'use strict';

/*
 * A bounded LRU of derived, immutable per-message data (ENVELOPE, BODYSTRUCTURE, kept
 * metadata). Keys start with mailboxScope (user, the mailbox's identity, UIDVALIDITY) and end
 * with the uid, and a uid's bytes never change (RFC 3501 2.3.1.1), so entries never go stale;
 * the bound keeps memory fixed whatever the mailbox sizes. Bounded by entry count, or by
 * `sizeOf` units (bytes) when given.
 */

/**
 * The part of a cache key that names one mailbox for good: the backend's identity of it (pg:
 * the mailbox id, from a sequence, never reused) beside its UIDVALIDITY. Never the name with
 * UIDVALIDITY alone: a name deleted and created again, or a kept upstream UIDVALIDITY, can
 * repeat that pair, and a cache keyed by it served a deleted mailbox's headers (issue 28).
 * Backends without an identity fall back to the name.
 * @param {string} user
 * @param {{name: string, uidvalidity: number, identity?: string|null}} view
 * @returns {string}
 */
function mailboxScope(user, view) {
  const id = view.identity == null ? `name:${view.name}` : `id:${view.identity}`;
  return `${user}\0${id}\0${view.uidvalidity}`;
}

class StructureCache {
  /**
   * @param {number} max entries, or units of sizeOf
   * @param {(value: any, key: string) => number} [sizeOf]
   */
  constructor(max, sizeOf = () => 1) {
    this.max = max;
    this.sizeOf = sizeOf;
    this.size = 0;
    this.map = new Map();
  }

  get(key) {
    const v = this.map.get(key);
    if (v === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, v);
    return v;
  }

  set(key, value) {
    const old = this.map.get(key);
    if (old !== undefined) this.size -= this.sizeOf(old, key);
    this.map.delete(key);
    this.map.set(key, value);
    this.size += this.sizeOf(value, key);
    for (const [k, v] of this.map) {
      if (this.size <= this.max) break;
      this.map.delete(k);
      this.size -= this.sizeOf(v, k);
    }
  }
}

module.exports = { StructureCache, mailboxScope };
