'use strict';

const { ImapFlow } = require('imapflow');
const { errors, upstreamSecurity } = require('@mailgate/core');
const { compileImap, compilePredicate } = require('@mailgate/query');
const { parseMessage } = require('@mailgate/mime');
const { headerRowFromParsed } = require('@mailgate/model');
const { splitFlags } = require('@mailgate/readers');
const { describe, toAst, pageRows } = require('./message');

/*
 * The legacy IMAP backend: the same storage interface answered by an upstream IMAP server
 * (Dovecot on mbox or Maildir in the tests and the benchmark) through imapflow. Header scans
 * FETCH only what a header row needs (UID FLAGS INTERNALDATE RFC822.SIZE BODYSTRUCTURE and
 * BODY.PEEK[HEADER.FIELDS (…)], RFC 3501 6.4.5), searches are compiled to SEARCH keys
 * (compileImap; inexact terms are re-checked on the fetched message with the predicate),
 * flags go through UID STORE, expunge through UID EXPUNGE (RFC 4315 UIDPLUS) or, without
 * UIDPLUS, EXPUNGE. UIDs are the server's.
 */

const HEADER_FIELDS = ['from', 'to', 'cc', 'subject', 'date', 'message-id'];

/**
 * Account settings → imapflow options. The password comes from the named environment
 * variable at connect time; it is never stored or logged (imapflow logging is off).
 * @param {{host: string, port: number, login: string, passwordEnv?: string, password?: string, security?: string, tls?: boolean}} acct
 *   security: see upstreamSecurity (@mailgate/core)
 */
function flowOptions(acct) {
  const pass = acct.password ?? (acct.passwordEnv ? process.env[acct.passwordEnv] : undefined);
  if (pass == null) {
    throw new errors.USAGE(
      `environment variable ${acct.passwordEnv || '(none)'} with the IMAP password is not set`,
    );
  }
  const security = upstreamSecurity(acct);
  return {
    host: acct.host,
    port: Number(acct.port),
    secure: security === 'tls',
    // imapflow: doSTARTTLS true = STARTTLS required (no plaintext fallback), false = never.
    doSTARTTLS: security === 'tls' ? undefined : security === 'starttls',
    auth: { user: acct.login, pass },
    logger: false,
    emitLogs: false,
    disableAutoIdle: true,
    connectionTimeout: 15000,
  };
}

/**
 * Connects and logs in.
 * @param {object} acct see flowOptions
 * @returns {Promise<ImapFlow>}
 */
async function connect(acct) {
  const client = new ImapFlow(flowOptions(acct));
  client.on('error', () => {}); // a dropped connection surfaces on the next command
  try {
    await client.connect();
  } catch (err) {
    // A failed connect may leave imapflow's socket open (it would keep a CLI process alive).
    client.close();
    // imapflow's error for a STARTTLS that is required (doSTARTTLS: true) but not offered or
    // refused; a failed handshake (certificate) stays UPSTREAM_IMAP_FAILED.
    if (err.tlsFailed && /does not support STARTTLS/i.test(err.message || '')) {
      throw new errors.UPSTREAM_TLS_REQUIRED(`${acct.host}:${acct.port}`);
    }
    throw new errors.UPSTREAM_IMAP_FAILED(
      `${acct.host}:${acct.port}`,
      err.authenticationFailed ? 'login failed' : err.code || err.message,
    );
  }
  return client;
}

/** A small pool of logged-in connections per upstream account. */
class ImapPool {
  /** @param {object} acct @param {{size?: number}} [opts] */
  constructor(acct, opts = {}) {
    this.acct = acct;
    this.size = opts.size || 4;
    this.idle = [];
    this.count = 0;
    this.waiters = [];
  }

  /** @returns {Promise<ImapFlow>} */
  async acquire() {
    while (this.idle.length) {
      const c = this.idle.pop();
      if (c.usable) return c;
      this.count--;
    }
    if (this.count < this.size) {
      this.count++;
      try {
        return await connect(this.acct);
      } catch (err) {
        this.count--;
        throw err;
      }
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** @param {ImapFlow} c */
  release(c) {
    const w = this.waiters.shift();
    if (w) {
      if (c.usable) w(c);
      else {
        this.count--;
        this.acquire().then(w);
      }
      return;
    }
    this.idle.push(c);
  }

  /** Runs fn with a connection that has `mailbox` selected (or none when mailbox is null). */
  async with(mailbox, fn) {
    const c = await this.acquire();
    let lock = null;
    try {
      if (mailbox) lock = await c.getMailboxLock(mailbox);
      return await fn(c);
    } catch (err) {
      if (
        err.responseText &&
        /doesn't exist|NONEXISTENT/i.test(err.responseText + err.serverResponseCode)
      ) {
        throw new errors.MAILBOX_NOT_FOUND(mailbox);
      }
      throw err;
    } finally {
      if (lock) lock.release();
      this.release(c);
    }
  }

  async close() {
    const all = this.idle.splice(0);
    this.count -= all.length;
    await Promise.all(all.map((c) => c.logout().catch(() => c.close())));
  }
}

/** RFC 3501 BODYSTRUCTURE → has an attachment part (a disposition attachment or a named part). */
function hasAttachment(node) {
  if (!node) return false;
  if (node.childNodes) return node.childNodes.some(hasAttachment);
  return (
    node.disposition === 'attachment' ||
    Boolean(node.dispositionParameters && node.dispositionParameters.filename) ||
    Boolean(node.parameters && node.parameters.name)
  );
}

/** FETCH FLAGS → the data model's flags and keywords (the store's one split). */
function splitFetchedFlags(set) {
  return splitFlags(set || []);
}

/** Header row from a FETCH response, fields derived by @mailgate/mime like everywhere else. */
function rowFromFetch(m) {
  const head = m.headers || Buffer.alloc(0);
  let p;
  try {
    p = parseMessage(Buffer.concat([head, Buffer.from('\r\n')]));
  } catch {
    // None of the fields present (e.g. a header-less message): a row with nulls, as on pg.
    p = { from: null, to: [], cc: [], subject: null, date: null, messageId: null };
  }
  const { flags, keywords } = splitFetchedFlags(m.flags);
  return headerRowFromParsed(p, {
    uid: m.uid,
    internalDate: new Date(m.internalDate),
    size: m.size,
    flags,
    keywords,
    hasAttachments: hasAttachment(m.bodyStructure),
    modseq: m.modseq ? Number(m.modseq) : 0,
  });
}

/**
 * The raw message as stored on a Unix file system: servers send CRLF line ends (RFC 3501
 * 4.3), mbox and Maildir files usually hold LF. Used for the predicate's size.
 */
function unixSize(buf) {
  let crlf = 0;
  for (let i = buf.indexOf(13); i !== -1 && i < buf.length - 1; i = buf.indexOf(13, i + 1)) {
    if (buf[i + 1] === 10) crlf++;
  }
  return buf.length - crlf;
}

class ImapBackend {
  /** @param {object} acct {host, port, login, passwordEnv|password, security} @param {{poolSize?: number}} [opts] */
  constructor(acct, opts = {}) {
    this.pool = new ImapPool(acct, { size: opts.poolSize });
  }

  /** LIST + STATUS of every mailbox (RFC 3501 6.3.8/6.3.10, RFC 6154 special-use). */
  async listMailboxes() {
    return this.pool.with(null, async (c) => {
      const list = await c.list({
        statusQuery: {
          messages: true,
          unseen: true,
          uidValidity: true,
          uidNext: true,
          highestModseq: true,
        },
      });
      return list
        .filter((b) => !b.flags.has('\\Noselect'))
        .map((b) => ({
          name: b.path,
          total: b.status ? b.status.messages : 0,
          unseen: b.status ? b.status.unseen : 0,
          uidvalidity: b.status ? Number(b.status.uidValidity) : 0,
          uidnext: b.status ? b.status.uidNext : 0,
          highestmodseq: b.status && b.status.highestModseq ? Number(b.status.highestModseq) : 0,
          specialUse: b.specialUse || null,
        }))
        .sort((a, b) =>
          a.name === 'INBOX' ? -1 : b.name === 'INBOX' ? 1 : a.name < b.name ? -1 : 1,
        );
    });
  }

  /**
   * Header rows of a mailbox (uid order), or of the given uids.
   * @param {string} mailbox
   * @param {{uids?: number[]}} [opts]
   */
  async scanHeaders(mailbox, opts = {}) {
    return this.pool.with(mailbox, async (c) => {
      if (!c.mailbox.exists) return [];
      const range = opts.uids ? opts.uids.join(',') : '1:*';
      if (opts.uids && !opts.uids.length) return [];
      const rows = [];
      for await (const m of c.fetch(
        range,
        {
          uid: true,
          flags: true,
          internalDate: true,
          size: true,
          bodyStructure: true,
          headers: HEADER_FIELDS,
        },
        { uid: Boolean(opts.uids) },
      )) {
        rows.push(rowFromFetch(m));
      }
      return rows.sort((a, b) => a.uid - b.uid);
    });
  }

  /** @see FileBackend#scanPage (one FETCH of the whole mailbox per page) */
  async scanPage(mailbox, opts) {
    return pageRows(await this.scanHeaders(mailbox), opts);
  }

  /** NDJSON header rows (fetched in one FETCH, then streamed). */
  streamHeadersNdjson(mailbox, opts = {}) {
    const { Readable } = require('node:stream');
    const self = this;
    const t0 = process.hrtime.bigint();
    async function* lines() {
      const rows = await self.scanHeaders(mailbox);
      if (opts.onFirstBatch) opts.onFirstBatch(Number(process.hrtime.bigint() - t0) / 1e6);
      for (const r of rows) yield JSON.stringify(r) + '\n';
    }
    return Readable.from(lines(), { objectMode: false });
  }

  /**
   * Every message's bytes in uid order: `{uid, raw}` (one FETCH of BODY.PEEK[] per mailbox).
   * @param {string} mailbox
   */
  async *rawMessages(mailbox) {
    const all = await this.pool.with(mailbox, async (c) => {
      if (!c.mailbox.exists) return [];
      const out = [];
      for await (const m of c.fetch('1:*', { uid: true, source: true })) {
        out.push({ uid: m.uid, raw: m.source });
      }
      return out.sort((a, b) => a.uid - b.uid);
    });
    yield* all;
  }

  /** @returns {Promise<{header: object, raw: Buffer}|null>} */
  async getMessage(mailbox, uid) {
    return this.pool.with(mailbox, async (c) => {
      const m = await c.fetchOne(
        String(uid),
        {
          uid: true,
          flags: true,
          internalDate: true,
          size: true,
          bodyStructure: true,
          headers: HEADER_FIELDS,
          source: true,
        },
        { uid: true },
      );
      if (!m) return null;
      return { header: rowFromFetch(m), raw: m.source };
    });
  }

  /**
   * SEARCH with compiled keys; when the compilation is inexact the candidates' bodies are
   * fetched and checked with the predicate (so the answer equals the other backends').
   * @param {string|object} query
   * @param {{mailbox?: string, limit?: number, withRows?: boolean, rowLimit?: number}} [opts]
   */
  async search(query, opts = {}) {
    const ast = toAst(query);
    const { search, exact } = compileImap(ast);
    const test = exact ? null : compilePredicate(ast);
    const names = opts.mailbox ? [opts.mailbox] : (await this.listMailboxes()).map((b) => b.name);
    const hits = [];
    for (const mailbox of names) {
      const uids = await this.pool.with(mailbox, async (c) => {
        if (!c.mailbox.exists) return [];
        const found = ((await c.search(search, { uid: true })) || []).sort((a, b) => a - b);
        if (exact || !found.length) return found;
        const keep = [];
        for await (const m of c.fetch(
          found.join(','),
          { uid: true, flags: true, source: true },
          { uid: true },
        )) {
          const { flags, keywords } = splitFetchedFlags(m.flags);
          const d = describe(m.source, {
            uid: m.uid,
            mailbox,
            flags,
            keywords,
            internalDate: null,
            size: unixSize(m.source),
          });
          if (test(d.msg)) keep.push(m.uid);
        }
        return keep.sort((a, b) => a - b);
      });
      for (const uid of uids) hits.push({ mailbox, uid });
    }
    const out = { total: hits.length, hits: opts.limit ? hits.slice(0, opts.limit) : hits };
    if (opts.withRows) {
      out.rows = [];
      const first = hits.slice(0, opts.rowLimit ?? hits.length);
      for (const mailbox of names) {
        const uids = first.filter((h) => h.mailbox === mailbox).map((h) => h.uid);
        if (!uids.length) continue;
        for (const r of await this.scanHeaders(mailbox, { uids })) out.rows.push({ ...r, mailbox });
      }
    }
    return out;
  }

  /**
   * UID STORE +FLAGS/-FLAGS on uids or on a query's matches.
   * @param {string} mailbox
   * @param {{uids?: number[], query?: string|object, add?: string[], remove?: string[]}} opts
   */
  async setFlags(mailbox, opts) {
    const uids =
      opts.uids || (await this.search(opts.query ?? '', { mailbox })).hits.map((h) => h.uid);
    if (!uids.length) return { matched: 0, changed: [], highestModseq: 0 };
    const before = new Map((await this.scanHeaders(mailbox, { uids })).map((r) => [r.uid, r]));
    await this.pool.with(mailbox, async (c) => {
      const range = uids.join(',');
      if (opts.add && opts.add.length) await c.messageFlagsAdd(range, opts.add, { uid: true });
      if (opts.remove && opts.remove.length)
        await c.messageFlagsRemove(range, opts.remove, { uid: true });
    });
    const after = await this.scanHeaders(mailbox, { uids });
    const changed = after
      .filter((r) => {
        const b = before.get(r.uid);
        return !b || b.flags.join() !== r.flags.join() || b.keywords.join() !== r.keywords.join();
      })
      .map((r) => ({ uid: r.uid, flags: r.flags, keywords: r.keywords, modseq: r.modseq }));
    const highestModseq = Math.max(0, ...after.map((r) => r.modseq));
    return { matched: before.size, changed, highestModseq };
  }

  /**
   * Expunges `\Deleted` messages (among `uids` when given): UID EXPUNGE with UIDPLUS
   * (RFC 4315), else EXPUNGE — which, without UIDPLUS, removes every `\Deleted` message.
   * @param {string} mailbox
   * @param {{uids?: number[]}} [opts]
   */
  async expunge(mailbox, opts = {}) {
    return this.pool.with(mailbox, async (c) => {
      const q = { deleted: true };
      if (opts.uids) {
        if (!opts.uids.length) return { expunged: [], highestModseq: 0 };
        q.uid = opts.uids.join(',');
      }
      const uids = ((await c.search(q, { uid: true })) || []).sort((a, b) => a - b);
      if (!uids.length) return { expunged: [], highestModseq: 0 };
      // imapflow's messageDelete: STORE +FLAGS \Deleted (already set) then UID EXPUNGE when the
      // server has UIDPLUS, else a plain EXPUNGE.
      await c.messageDelete(uids.join(','), { uid: true });
      return { expunged: uids, highestModseq: 0 };
    });
  }

  /**
   * APPEND (RFC 3501 6.3.11); the uid comes from APPENDUID (RFC 4315) when offered.
   * @returns {Promise<{uid: number|null, uidvalidity: number|null}>}
   */
  async append(mailbox, raw, opts = {}) {
    return this.pool.with(null, async (c) => {
      const r = await c.append(mailbox, raw, opts.flags || [], opts.internalDate);
      if (!r) throw new errors.MAILBOX_NOT_FOUND(mailbox);
      return { uid: r.uid ?? null, uidvalidity: r.uidValidity ? Number(r.uidValidity) : null };
    });
  }

  /** UID COPY / UID MOVE (RFC 6851), uid map from COPYUID (RFC 4315). */
  async copy(mailbox, uids, target, opts = {}) {
    return this.pool.with(mailbox, async (c) => {
      const range = uids.join(',');
      const r = opts.move
        ? await c.messageMove(range, target, { uid: true })
        : await c.messageCopy(range, target, { uid: true });
      if (!r) throw new errors.MAILBOX_NOT_FOUND(target);
      const map = r.uidMap ? [...r.uidMap].sort((a, b) => a[0] - b[0]) : [];
      return { uidvalidity: r.uidValidity ? Number(r.uidValidity) : null, map };
    });
  }

  async move(mailbox, uids, target) {
    return this.copy(mailbox, uids, target, { move: true });
  }

  async createMailbox(name) {
    await this.pool.with(null, (c) => c.mailboxCreate(name));
  }

  async renameMailbox(from, to) {
    await this.pool.with(from, () => null); // MAILBOX_NOT_FOUND when it does not exist
    await this.pool.with(null, (c) => c.mailboxRename(from, to));
  }

  async deleteMailbox(name) {
    await this.pool.with(name, () => null);
    await this.pool.with(null, (c) => c.mailboxDelete(name));
  }

  /** SUBSCRIBE / UNSUBSCRIBE (RFC 3501 6.3.6/6.3.7). */
  async setSubscribed(name, subscribed) {
    await this.pool.with(null, (c) =>
      subscribed ? c.mailboxSubscribe(name) : c.mailboxUnsubscribe(name),
    );
  }

  /** LSUB (RFC 3501 6.3.9) names, INBOX first. */
  async listSubscriptions() {
    return this.pool.with(null, async (c) => {
      const list = await c.list();
      return list
        .filter((b) => b.subscribed)
        .map((b) => b.path)
        .sort((a, b) => (a === 'INBOX' ? -1 : b === 'INBOX' ? 1 : a < b ? -1 : 1));
    });
  }

  async close() {
    await this.pool.close();
  }
}

module.exports = {
  ImapBackend,
  ImapPool,
  connect,
  flowOptions,
  splitFetchedFlags,
  unixSize,
  hasAttachment,
};
