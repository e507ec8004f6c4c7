'use strict';

const { Readable } = require('node:stream');
const { errors, checkMailboxName } = require('@mailgate/core');
const { parseForDisplay, getAttachment } = require('@mailgate/mime');
const { listRowOf } = require('@mailgate/store');

/*
 * MailBackend: the one per-user mail interface every edge (API route, IMAP command, CLI
 * command, bench) calls. Owns the list of operations and what "unsupported" means: an
 * operation a backend does not declare in `capabilities` throws UNSUPPORTED_OPERATION (501),
 * never falls back to another backend. Subclasses implement the operations they declare;
 * what can be derived from other operations (getRaw, getMessage, scanNdjson) is derived here
 * once. Must never know which concrete backend it is.
 */

/** What every backend reads and changes (the legacy media included). */
const READ_WRITE = Object.freeze([
  'listMailboxes',
  'status',
  'scan',
  'scanStream',
  'scanRaw',
  'getMessage',
  'getRaw',
  'getRawMany',
  'getAttachment',
  'search',
  'setFlags',
  'expunge',
]);

/** Writes of whole messages and mailboxes: pg, and an upstream IMAP server. */
const MAILBOX_WRITES = Object.freeze([
  'append',
  'copy',
  'move',
  'createMailbox',
  'renameMailbox',
  'deleteMailbox',
  'subscribe',
  'unsubscribe',
  'listSubscriptions',
]);

/** Every operation of the interface, in README order. */
const OPERATIONS = Object.freeze([
  ...READ_WRITE,
  ...MAILBOX_WRITES,
  'changesSince',
  // \Recent (RFC 3501 2.3.2): the uids no session was told of yet, claimed by one session.
  'claimRecent',
  // Derived IMAP metadata kept beside a message (ENVELOPE, BODYSTRUCTURE, common header
  // lines): what lets an IMAP server answer a first sync without reading every message.
  'getImapMeta',
  // The list-view part of it (header lines, RFC822.SIZE) for a uid range, packed in one value.
  'getImapFieldsRange',
  // getRawMany with the mailbox's status from the same read: an IMAP FETCH of message bytes
  // checks its selected mailbox and reads the bytes in one round trip.
  'getRawWithStatus',
  // Threads (webmail): thread ids computed at import by the store.
  'listThreads',
  'threadMessages',
  'restoreExpunged',
]);

// The operations that name a mailbox to be made or written, and which argument names it.
const NAMED_TARGETS = Object.freeze([
  ['createMailbox', 0],
  ['renameMailbox', 1],
  ['append', 0],
]);

const DISPLAY_PARTS = Object.freeze(['headers', 'text', 'html', 'attachments']);

class MailBackend {
  /**
   * @param {string} kind
   * @param {Iterable<string>} capabilities operations this backend supports
   */
  constructor(kind, capabilities) {
    this.kind = kind;
    this.capabilities = new Set(capabilities);
    for (const op of OPERATIONS) {
      if (!this.capabilities.has(op)) {
        // An own property, so a subclass method cannot answer what it did not declare.
        this[op] = unsupported(kind, op);
      }
    }
    // Every name a client makes (a new mailbox, a rename's target, an append's target) passes
    // the one rule first (INVALID_MAILBOX_NAME), whatever the backend: a `..` segment would
    // later lead an export, or a file backend, outside its folder (issue 29.6).
    for (const [op, at] of NAMED_TARGETS) {
      if (!this.capabilities.has(op)) continue;
      const impl = this[op];
      this[op] = async (...args) => {
        checkMailboxName(args[at]);
        return impl.apply(this, args);
      };
    }
  }

  /**
   * The message's exact stored bytes.
   * @param {string} mailbox
   * @param {number} uid
   * @returns {Promise<Buffer>}
   */
  async getRaw(mailbox, uid) {
    return (await this.fetchMessage(mailbox, uid)).raw;
  }

  /**
   * Exact stored bytes of many messages (IMAP FETCH of a range). Messages that are gone are
   * absent. With `prefix`, a backend may return only the first `prefix` bytes of each (a
   * header-only read); derived here from getRaw, one message at a time, for backends that
   * have nothing faster.
   * @param {string} mailbox
   * @param {number[]} uids
   * @param {{prefix?: number}} [opts]
   * @returns {Promise<Map<number, Buffer>>}
   */
  async getRawMany(mailbox, uids, opts = {}) {
    const out = new Map();
    for (const uid of uids) {
      try {
        const raw = await this.getRaw(mailbox, uid);
        out.set(Number(uid), opts.prefix ? raw.subarray(0, opts.prefix) : raw);
      } catch (err) {
        if (!err || err.code !== 'MESSAGE_NOT_FOUND') throw err;
      }
    }
    return out;
  }

  /**
   * One message. Default: header row, header fields, text, sanitised HTML and the attachment
   * list, rendered by @mailgate/mime in its request worker pool within the parse budget: over
   * it (or not a message at all) is MESSAGE_NOT_RENDERABLE (422); the raw bytes stay
   * available. `parts` picks what is needed: `[]` gives the header row only, `['raw']` the row
   * and the exact bytes (no parse); display parts are `headers`, `text`, `html`,
   * `attachments` (any of them renders the message).
   * @param {string} mailbox
   * @param {number} uid
   * @param {{parts?: string[], images?: 'blocked'|'remote', attachmentUrl?: string}} [opts]
   *   remote images (blocked by default) and the URL prefix `cid:` references point at
   * @returns {Promise<{row: object, raw?: Buffer, headers?: Array<{name: string, value: string}>,
   *   subject?: string|null, from?: object|null, to?: object[], cc?: object[], date?: string|null,
   *   messageId?: string|null, text?: string, html?: string|null, attachments?: object[],
   *   truncated?: boolean}>}
   */
  async getMessage(mailbox, uid, opts = {}) {
    const parts = opts.parts || DISPLAY_PARTS;
    const m = await this.fetchMessage(mailbox, uid);
    const out = { row: m.row };
    if (parts.includes('raw')) out.raw = m.raw;
    if (!parts.some((p) => DISPLAY_PARTS.includes(p))) return out;
    let d;
    try {
      // owner: users share the render threads round-robin (@mailgate/mime request.js).
      d = await parseForDisplay(m.raw, {
        images: opts.images,
        attachmentUrl: opts.attachmentUrl,
        owner: this.owner,
      });
    } catch (err) {
      if (err.name !== 'MessageParseError') throw err;
      throw new errors.MESSAGE_NOT_RENDERABLE(String(uid), err.reason);
    }
    return {
      ...out,
      headers: d.headers.map((h) => ({ name: h.key, value: h.value })),
      subject: d.subject,
      from: d.from || m.row.from,
      to: d.to,
      cc: d.cc,
      date: d.date ? d.date.toISOString() : m.row.date,
      messageId: d.messageId,
      text: d.text,
      html: d.html,
      attachments: d.attachments,
      truncated: Boolean(d.truncated),
    };
  }

  /**
   * One decoded part (IMAP section number, as listed in getMessage's attachments).
   * @param {string} mailbox
   * @param {number} uid
   * @param {string} part
   * @returns {Promise<{contentType: string, filename: string|null, content: Buffer}>}
   */
  async getAttachment(mailbox, uid, part) {
    const a = getAttachment((await this.fetchMessage(mailbox, uid)).raw, part);
    if (!a) throw new errors.ATTACHMENT_NOT_FOUND(part);
    return a;
  }

  /**
   * The list view of a whole mailbox, uid order: each header row projected to what a client's
   * message list shows (@mailgate/store listRowOf: no recipients, preview or thread). The pg
   * backend overrides it with a cache of these rows alone; the rows are the same.
   * @param {string} mailbox
   * @param {{known?: object}} [_opts] known: a status() of this mailbox the caller read a
   *   moment ago in the same request; pg answers from its cache without reading the mailbox
   *   row again when the cached rows are at exactly that state (the others ignore it)
   * @returns {Promise<ReadonlyArray<object>>}
   */
  async scanList(mailbox, _opts = {}) {
    const { rows } = await this.scan(mailbox, {});
    return rows.map(listRowOf);
  }

  /**
   * The whole mailbox as NDJSON header rows (one JSON line per scanStream row). The pg
   * backend overrides it with lines from a server-side cursor, built by ndjsonLine; the rows are the same.
   * @param {string} mailbox
   * @param {{order?: 'asc'|'desc', sort?: 'uid'|'date'}} [opts]
   * @returns {Readable} bytes
   */
  scanNdjson(mailbox, opts = {}) {
    const rows = this.scanStream(mailbox, opts);
    async function* lines() {
      for await (const r of rows) yield JSON.stringify(r) + '\n';
    }
    return Readable.from(lines(), { objectMode: false });
  }

  /**
   * The list view of the whole mailbox as NDJSON (one scanList row per line). In uid order the
   * lines come from scanList (pg: its cache); in date order from scanStream's rows projected,
   * which keeps the backend's exact date order (PostgreSQL's microseconds, not the rows'
   * milliseconds).
   * @param {string} mailbox
   * @param {{order?: string}} [opts] `uid` (default), `-uid`, `date`, `-date`
   * @returns {Readable} bytes
   */
  scanListNdjson(mailbox, opts = {}) {
    const order = opts.order || 'uid';
    const self = this;
    async function* chunks() {
      if (order !== 'uid' && order !== '-uid') {
        for await (const r of self.scanStream(mailbox, opts)) {
          yield JSON.stringify(listRowOf(r)) + '\n';
        }
        return;
      }
      const rows = await self.scanList(mailbox);
      const n = rows.length;
      let out = '';
      for (let i = 0; i < n; i++) {
        out += JSON.stringify(rows[order === '-uid' ? n - 1 - i : i]) + '\n';
        // ~64 KB writes: the API's stall timeout must see a reading client drain each one.
        if (out.length >= 65536) {
          yield out;
          out = '';
        }
      }
      if (out) yield out;
    }
    return Readable.from(chunks(), { objectMode: false });
  }

  /** Releases what the backend holds (connections are pooled per service). */
  async close() {}
}

function unsupported(kind, op) {
  // The streams answer synchronously (an iterable), so they throw at once; the others reject.
  if (op === 'scanStream' || op === 'scanRaw') {
    return () => {
      throw new errors.UNSUPPORTED_OPERATION(kind, op);
    };
  }
  return async () => {
    throw new errors.UNSUPPORTED_OPERATION(kind, op);
  };
}

module.exports = { MailBackend, OPERATIONS, READ_WRITE, MAILBOX_WRITES };
