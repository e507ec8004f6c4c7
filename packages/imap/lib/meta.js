'use strict';

/*
 * IMAP metadata served by FETCH: the ENVELOPE, BODY and BODYSTRUCTURE values in wire form, the
 * raw lines of the header fields mail clients put in their message lists, and RFC822.SIZE.
 * They are derived once, at import or delivery (@mailgate/mime imap-meta.js, run by the
 * importer's deriveRow), and kept by the store (`message_imap`); this module reads them through
 * the service, keeps a bounded in-memory copy (a uid's bytes never change: entries never go
 * stale), and answers the FETCH items they cover. It never writes: a message without kept
 * metadata (a database not backfilled yet, a message with NUL bytes) is derived on the spot
 * from its bytes and held in memory only.
 */

const { FIELDS, deriveMeta, pickFields } = require('@mailgate/mime/imap-meta');
const { mailboxScope } = require('./cache');

/** Bytes of metadata kept in memory over all sessions of this process. */
const CACHE_BYTES = 64 * 1024 * 1024;

/**
 * Metadata kept in memory, bounded by bytes: one map of uid → metadata per (user, mailbox,
 * UIDVALIDITY), so that a 21,282-message FETCH does one number lookup per message (no key
 * string built, no LRU move per hit). Recency is kept per mailbox: the least recently used
 * mailbox gives up its oldest entries first.
 */
class MetaCache {
  /** @param {number} maxBytes */
  constructor(maxBytes) {
    this.max = maxBytes;
    this.size = 0;
    this.count = 0;
    this.boxes = new Map(); // prefix → Map<uid, meta>, least recently used first
  }

  get bytes() {
    return this.size;
  }

  /**
   * The uid → metadata map of one mailbox, marked most recently used (once per FETCH).
   * @param {string} prefix user, mailbox and UIDVALIDITY
   * @returns {Map<number, object>|undefined}
   */
  box(prefix) {
    const b = this.boxes.get(prefix);
    if (b) {
      this.boxes.delete(prefix);
      this.boxes.set(prefix, b);
    }
    return b;
  }

  /** @param {string} prefix @param {number} uid */
  get(prefix, uid) {
    const b = this.boxes.get(prefix);
    return b && b.get(uid);
  }

  /** @param {string} prefix @param {number} uid @param {object} m */
  set(prefix, uid, m) {
    let b = this.boxes.get(prefix);
    if (!b) {
      b = new Map();
      this.boxes.set(prefix, b);
    }
    const old = b.get(uid);
    if (old) {
      this.size -= metaSize(old);
      this.count--;
    }
    b.set(uid, m);
    this.size += metaSize(m);
    this.count++;
    for (const [k, box] of this.boxes) {
      if (this.size <= this.max) break;
      for (const [u, v] of box) {
        if (this.size <= this.max) break;
        box.delete(u);
        this.size -= metaSize(v);
        this.count--;
      }
      if (!box.size) this.boxes.delete(k);
    }
  }
}

// Bytes one entry may hold: its texts, plus room for the memos fetch.js keeps on it (the
// list-view header block, a subset of `fields`, and INTERNALDATE's text).
const metaSize = (m) =>
  (m.envelope || '').length +
  (m.body || '').length +
  (m.bodystructure || '').length +
  2 * (m.fields || '').length +
  256;

const cache = new MetaCache(CACHE_BYTES);
const RAW_BATCH = 500;

/** The kept values (besides RFC822.SIZE, always read) each covered item needs. */
const PART_OF = { ENVELOPE: 'envelope', BODY: 'body', BODYSTRUCTURE: 'bodystructure' };

/**
 * The kept values a FETCH's covered items need: a list view reads only the header lines, an
 * ENVELOPE fetch only the envelopes (half the bytes of a whole row or less).
 * @param {Array<{name: string}>} items covered items (coveredItem)
 * @returns {string[]} of envelope, body, bodystructure, fields
 */
function partsFor(items) {
  const out = new Set();
  for (const it of items) {
    if (PART_OF[it.name]) out.add(PART_OF[it.name]);
    else if (it.name === 'BODY[]') out.add('fields');
  }
  return [...out];
}

/**
 * Whether a FETCH item is answered from metadata alone.
 * @param {{name: string, section?: object}} it
 */
function coveredItem(it) {
  if (['ENVELOPE', 'BODY', 'BODYSTRUCTURE', 'RFC822.SIZE'].includes(it.name)) return true;
  if (it.name !== 'BODY[]' || !it.section) return false;
  const sec = it.section;
  if (sec.path.length || sec.part !== 'HEADER.FIELDS') return false;
  for (const f of sec.fields) if (!FIELDS.has(f)) return false;
  return true;
}

/**
 * HEADER.FIELDS of the top-level message from the kept lines: the same bytes as the section
 * read from the message (its field lines in order, then the blank line, RFC 3501 6.4.5).
 * @param {string} fields kept lines
 * @param {Set<string>} names lower-cased field names, all in FIELDS
 * @returns {Buffer}
 */
function headerFields(fields, names) {
  return Buffer.from(headerFieldsText(fields, names), 'latin1');
}

/**
 * A FETCH item's header-fields block (`BODY[HEADER.FIELDS (…)] {n}\r\n…`, partial applied)
 * as latin1 text, memoised on the metadata object for the last item asked: a list view asks
 * the same fields of every message again and again. Room for it is counted in metaSize.
 * @param {object} meta
 * @param {{label: string, section: {fields: Set<string>}, partial: [number, number]|null, key?: string}} it
 */
function headerFieldsItem(meta, it) {
  const key =
    it.key || (it.key = `${it.label}\0${[...it.section.fields].join(' ')}\0${it.partial}`);
  if (meta.hfKey === key) return meta.hfText;
  let data = headerFieldsText(meta.fields, it.section.fields);
  if (it.partial) {
    const [start, len] = it.partial;
    data = start >= data.length ? '' : data.slice(start, start + len);
  }
  const text = `${it.label} {${data.length}}\r\n${data}`;
  meta.hfKey = key;
  meta.hfText = text;
  return text;
}

/** headerFields as latin1 text (one char per byte). */
function headerFieldsText(fields, names) {
  return pickFields(fields, names);
}

/**
 * Metadata of the given uids: from memory, then as kept by the store (one read through the
 * service, of the values asked for only), and for messages without kept metadata derived from
 * their bytes (read in batches through getRawMany) and held in memory only: a read never
 * writes.
 * @param {object} be the session's MailBackend (has getImapMeta)
 * @param {{name: string, uidvalidity: number, identity?: string|null}} view
 * @param {string} user
 * @param {number[]} uids
 * @param {string[]} [parts] the values needed (partsFor); default all. `size` always comes.
 * @returns {Promise<Map<number, object>>} uid → metadata (expunged messages are missing)
 */
async function metaFor(be, view, user, uids, parts = ALL_PARTS) {
  const out = new Map();
  const prefix = mailboxScope(user, view);
  let missing = [];
  const box = cache.box(prefix);
  const has = (m) => {
    for (const k of parts) if (m[k] === undefined) return false;
    return true;
  };
  for (const uid of uids) {
    const m = box && box.get(uid);
    if (m && has(m)) out.set(uid, m);
    else missing.push(uid);
  }
  if (!missing.length) return out;
  const stored = await be.getImapMeta(view.name, missing, { parts });
  const still = [];
  for (const uid of missing) {
    const got = stored.get(uid);
    if (got) {
      // Values read before (other parts) stay: a uid's metadata never changes.
      const old = cache.get(prefix, uid);
      const m = old ? { ...old, ...got, hfKey: undefined, hfText: undefined } : got;
      cache.set(prefix, uid, m);
      out.set(uid, m);
    } else still.push(uid);
  }
  return derivedMeta(be, view, user, still, out);
}

/**
 * Metadata of uids the store keeps none for, derived from their bytes (read RAW_BATCH per
 * getRawMany call: one query on pg, not one getRaw round trip each) and held in memory only.
 * @param {object} be the session's MailBackend
 * @param {{name: string, uidvalidity: number, identity?: string|null}} view
 * @param {string} user
 * @param {number[]} uids without kept metadata
 * @param {Map<number, object>} [out] added to and returned
 * @returns {Promise<Map<number, object>>} uid → metadata (expunged messages are missing)
 */
async function derivedMeta(be, view, user, uids, out = new Map()) {
  const prefix = mailboxScope(user, view);
  for (let i = 0; i < uids.length; i += RAW_BATCH) {
    const batch = uids.slice(i, i + RAW_BATCH);
    const raws = await be.getRawMany(view.name, batch);
    batch.forEach((uid) => {
      const raw = raws.get(uid);
      if (!raw) return; // expunged meanwhile
      const m = deriveMeta(raw);
      cache.set(prefix, uid, m);
      out.set(uid, m);
    });
  }
  return out;
}

const ALL_PARTS = ['envelope', 'body', 'bodystructure', 'fields'];

/**
 * One kept value (`part`: the list-view header lines, or the ENVELOPE) and the sizes of the
 * messages with uid in [lo, hi], packed (service getImapFieldsRange: one statement, a row per
 * 512 uids), handed to `onPart` in uid order: from the server's list-view cache in one part
 * when an earlier read of this mailbox covered the range, else as PostgreSQL sends the rows
 * (one part per row), so that the caller writes the first responses while the rest is still
 * being read, then kept in the cache as those parts (list-view-cache.js: bounded in bytes, a
 * quarter per user). Kept as read, a large string and typed arrays, not an
 * object per message: the garbage collector has little to copy (issue 35.3). A uid's lines
 * never change; a message kept after the read (a backfill) is missing from it and is derived
 * by the caller, as any message without kept lines.
 * @param {object} be the session's MailBackend (has getImapFieldsRange)
 * @param {{name: string, uidvalidity: number, identity?: string|null}} view
 * @param {string} user
 * @param {number} lo
 * @param {number} hi
 * @param {import('./list-view-cache').ListViewCache|null} cache the server's
 * @param {'fields'|'envelope'} part
 * @param {(packed: {uids: ArrayLike<number>, sizes: ArrayLike<number>, starts: ArrayLike<number>, ends: ArrayLike<number>, text: string}) => Promise<void>} onPart
 * @returns {Promise<void>}
 */
async function packedFields(be, view, user, lo, hi, cache, part, onPart) {
  // The value read is part of the key: a list view's reads and an ENVELOPE fetch's are apart.
  const scope = `${mailboxScope(user, view)}\0${part}`;
  const hit = cache && cache.get(user, scope, lo, hi);
  if (hit) {
    for (const p of hit.parts || [hit]) await onPart(p);
    return;
  }
  const parts = [];
  const take = (p) => {
    parts.push(p);
    return onPart(p);
  };
  // A backend that answers in one piece (no onPart) returns the whole read.
  const whole = await be.getImapFieldsRange(view.name, lo, hi, part, { onPart: take });
  if (whole) await take(whole);
  // Kept as the parts it came in (no copy to join them; list-view-cache.js counts them).
  if (cache) cache.set(user, scope, lo, hi, parts.length === 1 ? parts[0] : { parts });
}

module.exports = {
  FIELDS,
  coveredItem,
  partsFor,
  headerFields,
  headerFieldsText,
  headerFieldsItem,
  metaFor,
  derivedMeta,
  packedFields,
  MetaCache,
};
