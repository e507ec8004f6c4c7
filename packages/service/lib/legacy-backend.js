'use strict';

const { errors } = require('@mailgate/core');
const { pageRows } = require('@mailgate/legacy');
const { MailBackend, READ_WRITE, MAILBOX_WRITES } = require('./backend');
const paging = require('./paging');

/*
 * The legacy media behind the interface: direct mbox and Maildir files and an upstream IMAP
 * server (@mailgate/legacy). They answer what their medium allows — reads, flags, expunge;
 * on imap also what the upstream server does (APPEND, COPY, MOVE, mailbox life cycle,
 * subscriptions) — and every other operation is UNSUPPORTED_OPERATION. File backends keep no
 * modseq (0) and number messages by position (stable until the next expunge).
 */

// restoreExpunged and changesSince need a store that keeps what it expunged and a modseq.
const CAPABILITIES = {
  mbox: READ_WRITE,
  maildir: READ_WRITE,
  imap: [...READ_WRITE, ...MAILBOX_WRITES],
};

class LegacyBackend extends MailBackend {
  /**
   * @param {'mbox'|'maildir'|'imap'} kind
   * @param {object} impl the @mailgate/legacy backend (MboxBackend, MaildirBackend, ImapBackend)
   */
  constructor(kind, impl) {
    super(kind, CAPABILITIES[kind]);
    this.impl = impl;
  }

  async names() {
    return (await this.impl.listMailboxes()).map((b) => b.name);
  }

  async listMailboxes() {
    const subs = this.capabilities.has('listSubscriptions')
      ? new Set(await this.listSubscriptions())
      : null;
    return (await this.impl.listMailboxes()).map((b) =>
      paging.mailboxRow(b, subs ? subs.has(b.name) : null),
    );
  }

  async status(mailbox) {
    const b = (await this.impl.listMailboxes()).find((x) => x.name === mailbox);
    if (!b) throw new errors.MAILBOX_NOT_FOUND(mailbox);
    return {
      name: b.name,
      total: b.total,
      unseen: b.unseen,
      recent: 0,
      uidvalidity: b.uidvalidity,
      uidnext: b.uidnext,
      highestModseq: b.highestmodseq,
    };
  }

  async scan(mailbox, opts = {}) {
    const { desc, sort } = paging.scanOrder(opts);
    const rows = await this.impl.scanHeaders(mailbox);
    const after = paging.decodeCursor(opts.cursor);
    const limit = opts.limit == null ? rows.length + 1 : opts.limit;
    const page = pageRows(rows, { limit, order: sort, desc, after });
    return {
      rows: page.rows,
      total: rows.length,
      nextCursor: page.next ? paging.encodeCursor(page.next) : null,
    };
  }

  scanStream(mailbox, opts = {}) {
    const { desc, sort } = paging.scanOrder(opts);
    const impl = this.impl;
    return (async function* rows() {
      const rows = await impl.scanHeaders(mailbox);
      yield* pageRows(rows, { limit: rows.length, order: sort, desc }).rows;
    })();
  }

  /** Every message's exact bytes in uid order: `{uid, raw}`. */
  scanRaw(mailbox) {
    const impl = this.impl;
    return (async function* raws() {
      if (!impl.entries) {
        yield* impl.rawMessages(mailbox);
        return;
      }
      // uid 0: bytes before the first From_ line, not a message
      for await (const e of impl.entries(mailbox)) if (e.uid) yield { uid: e.uid, raw: e.raw };
    })();
  }

  /** @protected */
  async fetchMessage(mailbox, uid) {
    const m = await this.impl.getMessage(mailbox, Number(uid));
    if (!m) throw new errors.MESSAGE_NOT_FOUND(String(uid));
    return { row: m.header, raw: m.raw };
  }

  async search(query, opts = {}) {
    const ast = paging.toAst(query);
    await paging.checkMailboxes(ast, () => this.names());
    if (opts.mailbox != null && !(await this.names()).includes(opts.mailbox)) {
      throw new errors.MAILBOX_NOT_FOUND(opts.mailbox);
    }
    const { sort, desc } = paging.searchOrder(opts.order);
    if (sort && sort !== 'uid' && sort !== 'date') {
      throw new errors.UNSUPPORTED_OPERATION(this.kind, `search order ${opts.order}`);
    }
    const r = await this.impl.search(ast, { mailbox: opts.mailbox });
    let hits = r.hits;
    if (sort === 'uid') {
      // order=uid/-uid: by uid across mailboxes.
      hits = [...r.hits].sort((a, b) =>
        desc
          ? b.uid - a.uid || (a.mailbox < b.mailbox ? 1 : -1)
          : a.uid - b.uid || (a.mailbox < b.mailbox ? -1 : 1),
      );
    } else if (sort === 'date') {
      // order=date/-date (the API's default): the hits' header rows give the date the pg
      // store sorts by (Date header, else internal date), ties by mailbox and uid.
      hits = await this.byDate(r.hits, desc);
    }
    const { page, nextCursor } = paging.pageHits(hits, {
      ...opts,
      order: sort ? 'asc' : opts.order,
    });
    const rows = [];
    for (const mailbox of new Set(page.map((h) => h.mailbox))) {
      const want = new Set(page.filter((h) => h.mailbox === mailbox).map((h) => h.uid));
      const all = await this.impl.scanHeaders(mailbox, { uids: [...want] });
      for (const row of all) if (want.has(row.uid)) rows.push({ ...row, mailbox });
    }
    const pos = new Map(page.map((h, i) => [`${h.mailbox}\0${h.uid}`, i]));
    rows.sort((a, b) => pos.get(`${a.mailbox}\0${a.uid}`) - pos.get(`${b.mailbox}\0${b.uid}`));
    return { total: r.total, mailboxes: paging.perMailbox(r.hits), rows, nextCursor };
  }

  /**
   * Hits `[{mailbox, uid}]` in date order: the Date header, else the internal date, then
   * mailbox and uid (the pg store's order; its timestamps have microseconds, these
   * milliseconds, which only matters for ties inside one millisecond).
   * @private
   */
  async byDate(hits, desc) {
    const dates = new Map();
    for (const mailbox of new Set(hits.map((h) => h.mailbox))) {
      const uids = hits.filter((h) => h.mailbox === mailbox).map((h) => h.uid);
      for (const row of await this.impl.scanHeaders(mailbox, { uids })) {
        const d = new Date(row.date || row.internalDate).getTime();
        dates.set(`${mailbox}\0${row.uid}`, Number.isNaN(d) ? -Infinity : d);
      }
    }
    const key = (h) => dates.get(`${h.mailbox}\0${h.uid}`) ?? -Infinity;
    const cmp = (a, b) =>
      key(a) - key(b) || (a.mailbox < b.mailbox ? -1 : a.mailbox > b.mailbox ? 1 : a.uid - b.uid);
    return [...hits].sort(desc ? (a, b) => cmp(b, a) : cmp);
  }

  async setFlags(mailbox, uidsOrQuery, add = [], remove = []) {
    const sel = Array.isArray(uidsOrQuery)
      ? { uids: uidsOrQuery.map(Number) }
      : { query: paging.toAst(uidsOrQuery) };
    if (sel.query) await paging.checkMailboxes(sel.query, () => this.names());
    return this.impl.setFlags(mailbox, { ...sel, add, remove });
  }

  async expunge(mailbox, uids, opts = {}) {
    const sel = uids ? { uids: uids.map(Number) } : {};
    // "Delete now" is the client's two steps on these media: flag, then expunge those uids.
    if (opts.force && uids) await this.impl.setFlags(mailbox, { ...sel, add: ['\\Deleted'] });
    return this.impl.expunge(mailbox, sel);
  }

  // Upstream IMAP only (declared in CAPABILITIES.imap); the ImapBackend speaks imapflow.
  async append(mailbox, raw, opts = {}) {
    return this.impl.append(mailbox, raw, opts);
  }

  async copy(mailbox, uids, target) {
    return this.impl.copy(mailbox, uids.map(Number), target);
  }

  async move(mailbox, uids, target) {
    return this.impl.move(mailbox, uids.map(Number), target);
  }

  async createMailbox(name) {
    await this.impl.createMailbox(name);
  }

  async renameMailbox(from, to) {
    await this.impl.renameMailbox(from, to);
  }

  async deleteMailbox(name) {
    await this.impl.deleteMailbox(name);
  }

  async subscribe(name) {
    await this.impl.setSubscribed(name, true);
  }

  async unsubscribe(name) {
    await this.impl.setSubscribed(name, false);
  }

  async listSubscriptions() {
    return this.impl.listSubscriptions();
  }
}

module.exports = { LegacyBackend, CAPABILITIES };
