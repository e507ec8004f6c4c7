'use strict';

/*
 * A bounded LRU of derived, immutable per-message data (ENVELOPE, BODYSTRUCTURE). Keys include
 * user, mailbox, UIDVALIDITY and uid, and a uid's bytes never change (RFC 3501 2.3.1.1), so
 * entries never go stale; the bound keeps memory fixed whatever the mailbox sizes.
 */

class StructureCache {
  /** @param {number} max entries */
  constructor(max) {
    this.max = max;
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
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value);
  }
}

module.exports = { StructureCache };
