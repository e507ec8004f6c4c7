'use strict';

const { Readable } = require('node:stream');
const { compilePredicate } = require('@mailgate/query');
const { describe, toAst, pageRows } = require('./message');

/**
 * What the mbox and maildir backends share: every read is a scan of the files (as UW-IMAP and
 * Courier did — no index), searches test each parsed message with compilePredicate(), and
 * results come in the pg store's shapes, keyed by mailbox *name* instead of mailbox id.
 * Subclasses provide mailboxNames(), entries(mailbox) and the two writes.
 */
class FileBackend {
  /**
   * Mailboxes with counts; reading every file is what "list" cost on these servers.
   * @returns {Promise<Array<{name: string, total: number, unseen: number, uidvalidity: number, uidnext: number, highestmodseq: number, specialUse: null}>>}
   */
  async listMailboxes() {
    const out = [];
    for (const name of await this.mailboxNames()) {
      let total = 0;
      let unseen = 0;
      for await (const e of this.entries(name, { raw: false })) {
        total++;
        if (!e.flags.includes('\\Seen')) unseen++;
      }
      out.push({
        name,
        total,
        unseen,
        uidvalidity: 1,
        uidnext: total + 1,
        highestmodseq: 0,
        specialUse: null,
      });
    }
    return out;
  }

  /**
   * All header rows of a mailbox in uid order.
   * @param {string} mailbox
   * @returns {Promise<object[]>}
   */
  async scanHeaders(mailbox) {
    const rows = [];
    for await (const e of this.entries(mailbox))
      rows.push(describe(e.raw, { ...e, mailbox }).header);
    return rows;
  }

  /**
   * One page of header rows, keyset-paged like the pg store's scanPage(). The whole mailbox
   * is scanned for every page: that is the cost of a store without an index.
   * @param {string} mailbox
   * @param {{limit: number, order?: 'uid'|'date', desc?: boolean, after?: object|null}} opts
   */
  async scanPage(mailbox, opts) {
    return pageRows(await this.scanHeaders(mailbox), opts);
  }

  /**
   * The whole mailbox as NDJSON header rows, streamed while the files are read.
   * @param {string} mailbox
   * @param {{onFirstBatch?: (ms: number) => void}} [opts]
   * @returns {Readable}
   */
  streamHeadersNdjson(mailbox, opts = {}) {
    const self = this;
    const t0 = process.hrtime.bigint();
    async function* lines() {
      let first = true;
      for await (const e of self.entries(mailbox)) {
        if (first && opts.onFirstBatch)
          opts.onFirstBatch(Number(process.hrtime.bigint() - t0) / 1e6);
        first = false;
        yield JSON.stringify(describe(e.raw, { ...e, mailbox }).header) + '\n';
      }
      if (first && opts.onFirstBatch) opts.onFirstBatch(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    return Readable.from(lines(), { objectMode: false });
  }

  /**
   * @param {string} mailbox
   * @param {number} uid
   * @returns {Promise<{header: object, raw: Buffer}|null>}
   */
  async getMessage(mailbox, uid) {
    for await (const e of this.entries(mailbox)) {
      if (e.uid === uid) return { header: describe(e.raw, { ...e, mailbox }).header, raw: e.raw };
    }
    return null;
  }

  /**
   * Search by scanning: every message is parsed and tested with the AST predicate.
   * @param {string|object} query text or AST
   * @param {{mailbox?: string, limit?: number, withRows?: boolean, rowLimit?: number}} [opts]
   *   withRows: also return the header rows of the first rowLimit hits
   * @returns {Promise<{total: number, hits: Array<{mailbox: string, uid: number}>, rows?: object[]}>}
   */
  async search(query, opts = {}) {
    const test = compilePredicate(toAst(query));
    const names = opts.mailbox ? [opts.mailbox] : await this.mailboxNames();
    const hits = [];
    const rows = [];
    for (const mailbox of names) {
      for await (const e of this.entries(mailbox)) {
        const d = describe(e.raw, { ...e, mailbox });
        if (!test(d.msg)) continue;
        hits.push({ mailbox, uid: e.uid });
        if (opts.withRows && rows.length < (opts.rowLimit ?? Infinity)) {
          rows.push({ ...d.header, mailbox });
        }
      }
    }
    const lim = (a) => (opts.limit ? a.slice(0, opts.limit) : a);
    return { total: hits.length, hits: lim(hits), ...(opts.withRows ? { rows } : {}) };
  }

  /**
   * uids selected by `opts.uids` or by a query.
   * @protected
   */
  async selectUids(mailbox, opts) {
    if (opts.uids) return new Set(opts.uids.map(Number));
    const r = await this.search(opts.query ?? '', { mailbox });
    return new Set(r.hits.map((h) => h.uid));
  }
}

module.exports = { FileBackend };
