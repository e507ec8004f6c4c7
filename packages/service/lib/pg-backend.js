'use strict';

const { errors } = require('@mailgate/core');
const { splitFlags, byName } = require('@mailgate/store');
const { deriveRow, imapMetaOf } = require('@mailgate/importer');
const { MailBackend, OPERATIONS } = require('./backend');
const paging = require('./paging');

/*
 * The PostgreSQL backend: every operation of the interface, on @mailgate/store methods only
 * (no SQL here). Mailboxes are named; ids stay inside. A mailbox goes to the store by name
 * (byName): the store resolves it in the statement that reads or locks the mailbox, so an
 * operation costs no round trip of its own for the name, and a rename or delete in another
 * session never makes it hit another mailbox (no id is held between two statements). Expunge
 * hides at once and leaves the purge to the service's purger (two-phase, see @mailgate/store
 * expunge/purgeExpunged).
 */

class PgBackend extends MailBackend {
  /**
   * @param {{store: import('@mailgate/store').PgStore, user: {id: number, name: string}, purger?: {schedule: Function}|null, upkeep?: {wrote: Function}|null}} ctx
   * @param {string} [kind]
   * @param {Iterable<string>} [capabilities]
   */
  constructor(ctx, kind = 'pg', capabilities = OPERATIONS) {
    super(kind, capabilities);
    this.store = ctx.store;
    this.user = ctx.user;
    this.purger = ctx.purger || null;
    this.upkeep = ctx.upkeep || null;
  }

  /**
   * MAILBOX_MIGRATING while the user's route is `proxy`: their mail is still the upstream's,
   * and `mailgate migrate` is (or will be) importing it into this store, keeping upstream
   * UIDs, syncing flags from upstream and verifying counts; a write here would take a kept
   * UID, be overwritten by the flag sync or fail the verification. Reads stay allowed. The
   * importer writes through the store, not through this backend.
   */
  async writable() {
    if (typeof this.store.getRoute !== 'function') return;
    if ((await this.store.getRoute(this.user.name)) === 'proxy') {
      throw new errors.MAILBOX_MIGRATING(this.user.name);
    }
  }

  /**
   * The mailbox's id, by a statement of its own: only for the whole-mailbox streams, whose
   * first statement runs later (their one extra round trip is nothing beside a stream).
   * @param {string} name
   */
  async mailboxId(name) {
    return (await this.store.getMailbox(this.user.id, name)).id;
  }

  async listMailboxes() {
    return (await this.store.listMailboxes(this.user.id)).map((b) =>
      paging.mailboxRow(b, b.subscribed),
    );
  }

  /**
   * @param {string} mailbox
   * @param {{counts?: boolean, warm?: boolean}} [opts] counts false: the mailbox row only
   *   (uidvalidity, uidnext, modseq; total and unseen left out), one indexed read instead of a
   *   count too: what the IMAP session's per-command checks and SELECT need; warm false: a
   *   count does not load the full header rows in the background (store countMessages), for
   *   callers that never read them (IMAP STATUS, IDLE polls)
   */
  async status(mailbox, opts = {}) {
    const mb = await this.store.getMailbox(this.user.id, mailbox);
    // By id: the counts of the very mailbox whose row was just read.
    const c =
      opts.counts === false
        ? { total: undefined, unseen: undefined }
        : await this.store.countMessages(this.user.id, mb.id, { warm: opts.warm });
    return {
      name: mb.name,
      // Opaque: tells two mailboxes apart where UIDVALIDITY may not (IMAP's selected-mailbox
      // check); not an address, the interface stays keyed by name.
      identity: String(mb.id),
      total: c.total,
      unseen: c.unseen,
      // Messages no session has claimed as \Recent yet (claimRecent); not counted without counts.
      recent: opts.counts === false ? undefined : await this.store.countRecent(this.user.id, mb),
      // The first uid no session has claimed as \Recent (claims reach UIDNEXT at most): at or
      // past UIDNEXT there is nothing to claim, and an IMAP SELECT skips its claim, a row
      // update and a commit (issue 35.4: a re-SELECT made three round trips).
      recentFrom: Number(mb.recent_uid),
      uidvalidity: Number(mb.uidvalidity),
      uidnext: Number(mb.uidnext),
      highestModseq: Number(mb.highestmodseq),
    };
  }

  async scan(mailbox, opts = {}) {
    const id = byName(mailbox);
    const { desc, sort } = paging.scanOrder(opts);
    const after = paging.decodeCursor(opts.cursor);
    if (opts.limit == null && sort === 'uid' && !after) {
      // The whole mailbox: its row count is the total (no second query).
      const rows = await this.store.scanHeaders(this.user.id, id, {
        order: desc ? 'desc' : 'asc',
      });
      return { rows, total: rows.length, nextCursor: null };
    }
    const page = await this.store.scanPage(this.user.id, id, {
      limit: opts.limit == null ? Number.MAX_SAFE_INTEGER - 1 : opts.limit,
      order: sort,
      desc,
      after,
      withTotal: true,
    });
    return {
      rows: page.rows,
      total: page.total,
      nextCursor: page.next ? paging.encodeCursor(page.next) : null,
    };
  }

  scanList(mailbox, opts = {}) {
    // A status of this mailbox read a moment ago: cached rows at exactly its state are the
    // answer without another read of the mailbox row (store list-cache.js rowsOf).
    const k = opts.known;
    const known =
      k && k.identity != null && k.highestModseq != null
        ? { id: Number(k.identity), uidvalidity: k.uidvalidity, highestmodseq: k.highestModseq }
        : null;
    return this.store.scanList(this.user.id, byName(mailbox), { known });
  }

  scanStream(mailbox, opts = {}) {
    const { desc, sort } = paging.scanOrder(opts);
    const self = this;
    return (async function* rows() {
      const id = await self.mailboxId(mailbox);
      yield* self.store.streamHeaderRows(self.user.id, id, { order: sort, desc });
    })();
  }

  /**
   * NDJSON lines from a server-side cursor, built by ndjsonLine (or from the list cache), the
   * fast path of the API's whole-mailbox scan; rows equal scanStream's.
   */
  scanNdjson(mailbox, opts = {}) {
    const { desc, sort } = paging.scanOrder(opts);
    const { PassThrough } = require('node:stream');
    const out = new PassThrough();
    this.mailboxId(mailbox).then(
      (id) => {
        if (out.destroyed) return;
        const s = this.store.streamHeadersNdjson(this.user.id, id, {
          order: sort,
          desc,
          onFirstBatch: opts.onFirstBatch,
        });
        s.on('error', (err) => out.destroy(err));
        // pipe() does not pass a destroy upstream: without this, a client that goes away
        // leaves the cursor (and its pooled connection) paused behind a dead stream.
        out.once('close', () => s.destroy());
        s.pipe(out);
      },
      (err) => out.destroy(err),
    );
    return out;
  }

  /** One query for the whole list (store.sourcesFor), prefix read in PostgreSQL. */
  async getRawMany(mailbox, uids, opts = {}) {
    const rows = await this.store.sourcesFor(this.user.id, byName(mailbox), uids.map(Number), {
      prefix: opts.prefix,
    });
    return new Map(rows.map((r) => [r.uid, r.raw]));
  }

  /**
   * getRawMany and the mailbox's status (as `status(mailbox, {counts: false})`) from one
   * statement: the bytes are of the very mailbox the status describes. Bytes of messages an
   * expunge hid but the purge has not removed yet may be among them: the caller decides
   * visibility from the list view at that status (IMAP FETCH), which spares the statement a
   * join on the messages table (store sourcesWithMailbox `hidden`).
   * @param {string} mailbox
   * @param {number[]} uids
   * @returns {Promise<{status: object, raws: Map<number, Buffer>}>} MAILBOX_NOT_FOUND when none
   */
  async getRawWithStatus(mailbox, uids) {
    const ref = byName(mailbox);
    const { mailbox: mb, rows } = await this.store.sourcesWithMailbox(
      this.user.id,
      ref,
      uids.map(Number),
      { hidden: true },
    );
    return {
      status: {
        name: ref.name,
        identity: String(mb.id),
        total: undefined,
        unseen: undefined,
        recent: undefined,
        uidvalidity: mb.uidvalidity,
        uidnext: mb.uidnext,
        highestModseq: mb.highestmodseq,
      },
      raws: new Map(rows.map((r) => [r.uid, r.raw])),
    };
  }

  /** Every message's exact bytes in uid order: `{uid, raw}` (export, verify, bench keys). */
  scanRaw(mailbox) {
    const self = this;
    return (async function* raws() {
      const id = await self.mailboxId(mailbox);
      for await (const r of self.store.streamSources(self.user.id, id)) {
        yield { uid: Number(r.uid), raw: r.raw };
      }
    })();
  }

  /** @protected */
  async fetchMessage(mailbox, uid) {
    const m = await this.store.getMessage(this.user.id, byName(mailbox), Number(uid));
    if (!m) throw new errors.MESSAGE_NOT_FOUND(String(uid));
    return { row: m.header, raw: m.raw };
  }

  /**
   * Hits of a query as `[{mailbox, uid, id}]` (mailbox then uid order), in one statement:
   * the store checks `in:` and resolves the mailbox name (MAILBOX_NOT_FOUND) itself, and
   * names the hits. The es backend overrides this one step.
   * @protected
   * @param {object} ast
   * @param {string|undefined} mailbox
   */
  async findHits(ast, mailbox) {
    const r = await this.store.search(
      this.user.id,
      ast,
      mailbox != null ? { mailbox: byName(mailbox) } : { withNames: true },
    );
    return r.hits.map((h) => ({ mailbox: h.mailbox, uid: h.uid, id: h.mailboxId }));
  }

  async search(query, opts = {}) {
    const ast = paging.toAst(query);
    const { sort, desc } = paging.searchOrder(opts.order);
    const found = await this.findHits(ast, opts.mailbox == null ? undefined : String(opts.mailbox));
    const names = new Map(found.map((h) => [h.id, h.mailbox]));
    let hits = found;
    if (sort) {
      // Webmail orders (date, sender …): the store sorts the hits by its columns.
      const ordered = await this.store.orderHits(
        this.user.id,
        hits.map((h) => ({ mailboxId: h.id, uid: h.uid })),
        { sort, desc },
      );
      hits = ordered.map((h) => ({ mailbox: names.get(h.mailboxId), uid: h.uid, id: h.mailboxId }));
    }
    const { page, nextCursor } = paging.pageHits(hits, {
      ...opts,
      order: sort ? 'asc' : opts.order,
    });
    const rows = page.length
      ? await this.store.headersFor(
          this.user.id,
          page.map((h) => ({ mailboxId: h.id, uid: h.uid })),
        )
      : [];
    return {
      total: hits.length,
      // The matching set, mailbox then uid, whatever the rows' order: the same answer from
      // every backend (the file backends list it so too).
      mailboxes: paging.perMailbox(found),
      rows: rows.map(({ mailboxId: id, ...row }) => ({ ...row, mailbox: names.get(id) })),
      nextCursor,
    };
  }

  /**
   * opts.replace: the flags become exactly `add` (`remove` is not used); opts.unchangedSince:
   * messages above that modseq are left alone and listed in `modified`. Both decided in the
   * store's one statement under the mailbox lock (IMAP STORE FLAGS and UNCHANGEDSINCE).
   */
  async setFlags(mailbox, uidsOrQuery, add = [], remove = [], opts = {}) {
    await this.writable();
    const sel = Array.isArray(uidsOrQuery)
      ? { uids: uidsOrQuery.map(Number) }
      : { query: paging.toAst(uidsOrQuery) };
    // the store refuses an `in:` of a mailbox the user does not have (INVALID_QUERY)
    return this.store.setFlags(this.user.id, byName(mailbox), {
      ...sel,
      add,
      remove,
      replace: Boolean(opts.replace),
      unchangedSince: opts.unchangedSince ?? null,
    });
  }

  /**
   * IMAP EXPUNGE / UID EXPUNGE; with `{force: true}` the given uids go whether flagged
   * \Deleted or not — a webmail "delete now" (JMAP Email/set destroy) in one row update.
   */
  async expunge(mailbox, uids, opts = {}) {
    await this.writable();
    const sel = uids ? { uids: uids.map(Number), force: Boolean(opts.force) } : {};
    const { mailboxId, ...r } = await this.store.expunge(this.user.id, byName(mailbox), sel);
    if (r.expunged.length && this.purger) {
      this.purger.schedule(this.user.id, mailboxId, r.expunged);
    }
    return r;
  }

  /**
   * Brings expunged messages back while they are not purged yet (an admin's rescue; the bench
   * between expunge samples, with the service's purge off). Same uids, new modseq.
   * @returns {Promise<{restored: number[], highestModseq: number}>}
   */
  async restoreExpunged(mailbox, uids) {
    await this.writable();
    return this.store.restoreExpunged(this.user.id, byName(mailbox), uids.map(Number));
  }

  /**
   * IMAP APPEND, LMTP/LDA delivery, the API's append: the store's one write of a new message.
   * No writable() read first: the store's allocating statement refuses a `proxy` user itself
   * (MAILBOX_MIGRATING), so a delivery costs no round trip for the route.
   */
  async append(mailbox, raw, opts = {}) {
    const buf = Buffer.isBuffer(raw) ? raw : Buffer.from(raw);
    const d = deriveRow(buf);
    // A message the parser refuses (binary, no header) is still stored as given: APPEND
    // stores bytes (RFC 3501 6.3.11); its header row is then mostly empty.
    const row = d.ok ? d.row : { ...emptyRow(buf), imap: imapMetaOf(buf) };
    const { flags, keywords } = splitFlags(opts.flags || []);
    const internalDate = opts.internalDate ? new Date(opts.internalDate) : undefined;
    const r = await this.store.appendMessage(this.user.id, byName(mailbox), {
      raw: buf,
      row,
      flags,
      keywords,
      internalDate,
    });
    // After the commit: the user's GIN pending lists are merged in the background, not by a
    // later delivery (service index-upkeep.js).
    if (this.upkeep) this.upkeep.wrote(this.user.id, buf.length);
    return { uid: r.uid, uidvalidity: r.uidvalidity };
  }

  async copy(mailbox, uids, target) {
    await this.writable();
    const [src, dst] = [await this.mailboxId(mailbox), await this.mailboxId(target)];
    return this.store.copyMessages(this.user.id, src, uids.map(Number), dst);
  }

  async move(mailbox, uids, target) {
    await this.writable();
    const [src, dst] = [await this.mailboxId(mailbox), await this.mailboxId(target)];
    const r = await this.store.copyMessages(this.user.id, src, uids.map(Number), dst, {
      move: true,
    });
    if (r.map.length && this.purger) {
      this.purger.schedule(
        this.user.id,
        src,
        r.map.map((p) => Number(p[0])),
      );
    }
    return r;
  }

  /**
   * Claims the mailbox's \Recent messages for the calling session (store claimRecent): uids
   * from <= uid < to. `peek`: read them without claiming (EXAMINE).
   * @param {string} mailbox
   * @param {{peek?: boolean}} [opts]
   * @returns {Promise<{from: number, to: number}>}
   */
  async claimRecent(mailbox, opts = {}) {
    return this.store.claimRecent(this.user.id, mailbox, opts);
  }

  async createMailbox(name, opts = {}) {
    await this.writable();
    await this.store.createMailbox(this.user.id, name, opts);
  }

  async renameMailbox(from, to) {
    await this.writable();
    await this.store.renameMailbox(this.user.id, from, to);
  }

  async deleteMailbox(name) {
    await this.writable();
    await this.store.deleteMailbox(this.user.id, name);
  }

  async subscribe(name) {
    await this.store.setSubscribed(this.user.id, name, true);
  }

  async unsubscribe(name) {
    await this.store.setSubscribed(this.user.id, name, false);
  }

  async listSubscriptions() {
    return this.store.listSubscriptions(this.user.id);
  }

  /**
   * Threads (thread ids computed at import), newest activity first, keyset-paged.
   * @param {{mailbox?: string, limit?: number, cursor?: string}} [opts]
   * @returns {Promise<{threads: object[], nextCursor: string|null}>}
   */
  async listThreads(opts = {}) {
    const mailboxId = opts.mailbox != null ? await this.mailboxId(opts.mailbox) : undefined;
    const after = paging.decodeCursor(opts.cursor);
    if (after && (typeof after.d !== 'string' || typeof after.t !== 'string')) {
      throw new errors.INVALID_CURSOR('not a thread cursor');
    }
    const r = await this.store.listThreads(this.user.id, { mailboxId, limit: opts.limit, after });
    return { threads: r.threads, nextCursor: r.next ? paging.encodeCursor(r.next) : null };
  }

  /**
   * A thread's messages, oldest first, each with its mailbox (THREAD_NOT_FOUND otherwise).
   * @param {string} threadId
   */
  async threadMessages(threadId) {
    const names = await this.store.mailboxNamesById(this.user.id);
    const rows = await this.store.threadMessages(this.user.id, String(threadId));
    return rows.map(({ mailboxId: id, ...row }) => ({ ...row, mailbox: names.get(id) }));
  }

  async changesSince(mailbox, modseq) {
    return this.store.changesSince(this.user.id, byName(mailbox), Number(modseq));
  }

  /**
   * The IMAP metadata kept for the given uids (derived at import or delivery; those that have it).
   * @param {string} mailbox
   * @param {number[]} uids
   * @param {{parts?: string[]}} [opts] the values to read (envelope, body, bodystructure,
   *   fields; default all); size always
   * @returns {Promise<Map<number, {envelope?: string, body?: string, bodystructure?: string, fields?: string, size: number}>>}
   */
  async getImapMeta(mailbox, uids, opts = {}) {
    return this.store.getImapMeta(this.user.id, byName(mailbox), uids, opts);
  }

  /**
   * One kept value (the list-view header lines by default, or the ENVELOPE …) and RFC822.SIZE
   * of the messages with uid in [lo, hi], packed into one text and four typed arrays (store
   * getImapFieldsRange): a whole mailbox's list view or ENVELOPE fetch in a few rows, no
   * object per message.
   * @param {string} mailbox
   * @param {number} lo
   * @param {number} hi
   * @param {'fields'|'envelope'|'body'|'bodystructure'} [part] default fields
   * @param {{onPart?: (packed: object) => (void|Promise<void>)}} [opts] onPart: the read
   *   handed over in parts, in uid order, as PostgreSQL sends them (resolves to undefined)
   * @returns {Promise<{uids: Float64Array, sizes: Uint32Array, starts: Uint32Array, ends: Uint32Array, text: string}|undefined>}
   */
  async getImapFieldsRange(mailbox, lo, hi, part = 'fields', opts = {}) {
    return this.store.getImapFieldsRange(this.user.id, byName(mailbox), lo, hi, part, opts);
  }
}

function emptyRow(raw) {
  return {
    date: null,
    from_name: null,
    from_addr: null,
    to_addrs: '[]',
    cc_addrs: '[]',
    subject: null,
    message_id: null,
    size: raw.length,
    has_attachments: false,
  };
}

module.exports = { PgBackend };
