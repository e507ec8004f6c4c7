'use strict';

/*
 * A bounded LRU of derived, immutable per-message data (ENVELOPE, BODYSTRUCTURE, kept
 * metadata). Keys include user, mailbox, UIDVALIDITY and uid, and a uid's bytes never change
 * (RFC 3501 2.3.1.1), so entries never go stale; the bound keeps memory fixed whatever the
 * mailbox sizes. Bounded by entry count, or by `sizeOf` units (bytes) when given.
 */

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

module.exports = { StructureCache };
