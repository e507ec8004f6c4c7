'use strict';

/*
 * IMAP metadata of a message, derived from its bytes once and kept (issue 12: "ENVELOPE and
 * BODYSTRUCTURE are derived from the raw bytes once … so a client's first sync of a large
 * mailbox is a narrow read"): the ENVELOPE, BODY and BODYSTRUCTURE values in wire form, and the
 * raw lines of the header fields mail clients put in their message lists. The mail service
 * keeps them beside the message (pg: `getImapMeta`/`putImapMeta`); this module derives them,
 * keeps a bounded in-memory copy (a uid's bytes never change: entries never go stale), and
 * answers the FETCH items they cover. Anything else reads the message.
 */

const { serialize } = require('./protocol/writer');
const { describe } = require('./structure');
const { parseTree, parseFields } = require('./mime-tree');
const { toCrlf } = require('./crlf');
const { mailboxScope } = require('./cache');

/**
 * Header fields kept as raw lines: what Thunderbird, Apple Mail, mutt, K-9 and Outlook ask for
 * in their list views (BODY.PEEK[HEADER.FIELDS (…)]). A request naming only these is answered
 * from the kept lines; any other name reads the message.
 */
const FIELDS = new Set([
  'date',
  'from',
  'sender',
  'reply-to',
  'to',
  'cc',
  'bcc',
  'subject',
  'message-id',
  'in-reply-to',
  'references',
  'content-type',
  'priority',
  'x-priority',
  'importance',
  'newsgroups',
  'list-id',
  'list-post',
]);

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
  m.envelope.length + m.body.length + m.bodystructure.length + 2 * m.fields.length + 256;

const cache = new MetaCache(CACHE_BYTES);
// Kept lines already split into fields, by their text (a list view asks for them again and again).
const PARSED = new Map();
const RAW_BATCH = 500;
const KEEP_BATCH = 2000;

/** A response value as wire text (latin1: one char per byte). */
function wire(value) {
  return serialize(value, [])
    .map((x) => (Buffer.isBuffer(x) ? x.toString('latin1') : x))
    .join('');
}

/**
 * The metadata of a message as served: on its CRLF form (crlf.js), so BODYSTRUCTURE sizes and
 * line counts and RFC822.SIZE (`size`) describe the bytes BODY[] sends.
 * @param {Buffer} raw the stored bytes
 * @returns {{envelope: string, body: string, bodystructure: string, fields: string, size: number}}
 */
function deriveMeta(raw) {
  const served = toCrlf(raw);
  const d = describe(served);
  const tree = parseTree(served);
  return {
    envelope: wire(d.envelope),
    body: wire(d.body),
    bodystructure: wire(d.bodystructure),
    fields: tree.fields
      .filter((f) => FIELDS.has(f.key))
      .map((f) => f.line)
      .join(''),
    size: served.length,
  };
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
  let parsed = PARSED.get(fields);
  if (!parsed) {
    parsed = parseFields(fields);
    // Strings cannot key a WeakMap: a small bounded map of the last lists parsed.
    if (PARSED.size >= 50000) PARSED.clear();
    PARSED.set(fields, parsed);
  }
  const lines = parsed.filter((f) => names.has(f.key)).map((f) => f.line);
  lines.push('\r\n');
  // CRLF throughout (RFC 3501 2.2: lines end with CRLF): the section is built, not stored
  // bytes, and its blank line is CRLF; a message stored with LF would give mixed endings.
  return lines.join('').replace(/\r?\n/g, '\r\n');
}

/**
 * Metadata of the given uids: from memory, then from the service, then derived from the
 * messages (read in batches through getRawMany) and kept through the service for next time.
 * @param {object} be the session's MailBackend (has getImapMeta/putImapMeta)
 * @param {{name: string, uidvalidity: number, identity?: string|null}} view
 * @param {string} user
 * @param {number[]} uids
 * @param {{logger?: object}} [opts]
 * @returns {Promise<Map<number, object>>} uid → metadata (expunged messages are missing)
 */
async function metaFor(be, view, user, uids, opts = {}) {
  const out = new Map();
  const prefix = mailboxScope(user, view);
  let missing = [];
  const box = cache.box(prefix);
  for (const uid of uids) {
    const m = box && box.get(uid);
    if (m) out.set(uid, m);
    else missing.push(uid);
  }
  if (!missing.length) return out;
  const stored = await be.getImapMeta(view.name, missing);
  const still = [];
  for (const uid of missing) {
    const m = stored.get(uid);
    if (m) {
      cache.set(prefix, uid, m);
      out.set(uid, m);
    } else still.push(uid);
  }
  missing = still;
  const fresh = [];
  // Messages to derive from: RAW_BATCH per getRawMany call (one query on pg), not one getRaw
  // round trip each — a first sync of 21,282 messages is ~43 queries instead of 21,282.
  for (let i = 0; i < missing.length; i += RAW_BATCH) {
    const batch = missing.slice(i, i + RAW_BATCH);
    const raws = await be.getRawMany(view.name, batch);
    batch.forEach((uid) => {
      const raw = raws.get(uid);
      if (!raw) return; // expunged meanwhile
      const m = deriveMeta(raw);
      cache.set(prefix, uid, m);
      out.set(uid, m);
      // PostgreSQL text cannot hold NUL: such a message's metadata is derived again next time.
      if (!hasNul(m)) fresh.push({ uid, ...m });
    });
  }
  // One call per FETCH chunk (up to 2,000): the store merges index entries after each.
  for (let i = 0; i < fresh.length; i += KEEP_BATCH) {
    try {
      await be.putImapMeta(view.name, fresh.slice(i, i + KEEP_BATCH));
    } catch (err) {
      // Keeping metadata is an optimisation: a failure costs a re-derivation, not the answer.
      if (opts.logger) opts.logger.warn({ err: err.code || err.message }, 'imap meta not kept');
      break;
    }
  }
  return out;
}

const hasNul = (m) =>
  m.envelope.includes('\0') ||
  m.body.includes('\0') ||
  m.bodystructure.includes('\0') ||
  m.fields.includes('\0');

module.exports = {
  FIELDS,
  deriveMeta,
  coveredItem,
  headerFields,
  headerFieldsText,
  headerFieldsItem,
  metaFor,
  MetaCache,
};
