'use strict';

/*
 * The process's one LISTEN connection for mailbox changes (migration 20261127200200: a
 * trigger NOTIFYs `mailgate_mailbox` with `<user_id>:<mailbox_id>` at the commit of every
 * change to a mailbox's messages, from any process). Subscribers (the IMAP server's IDLE
 * watcher) are told which mailbox changed, or `null` when notifications may have been missed
 * (the connection dropped: they look at everything again). One raw connection made by knex's
 * client with the pool's settings, outside the pool, opened at the first subscriber and closed
 * after the last; after an error it reconnects with a growing delay while anyone listens.
 * Owns the LISTEN; never writes.
 */

const CHANNEL = 'mailgate_mailbox';
const RETRY_MS = [250, 1000, 5000];

class MailboxChangeFeed {
  /**
   * @param {import('knex').Knex} knex
   * @param {{log?: object}} [opts]
   */
  constructor(knex, opts = {}) {
    this.client = knex.client;
    this.log = opts.log || null;
    this.listeners = new Set();
    this.conn = null;
    this.connecting = null;
    this.retry = 0;
    this.timer = null;
  }

  /**
   * Calls fn({userId, mailboxId}) after each committed change, fn(null) when changes may have
   * been missed, until the returned function is called.
   * @param {(change: {userId: number, mailboxId: number}|null) => void} fn
   * @returns {() => void} unsubscribe
   */
  subscribe(fn) {
    this.listeners.add(fn);
    if (!this.conn && !this.connecting) this.connect();
    return () => {
      this.listeners.delete(fn);
      if (!this.listeners.size) this.close();
    };
  }

  /** Resolves once the LISTEN is in place (tests; subscribers never need to wait). */
  async ready() {
    if (this.connecting) await this.connecting;
    return Boolean(this.conn);
  }

  connect() {
    clearTimeout(this.timer);
    this.timer = null;
    this.connecting = (async () => {
      let conn;
      try {
        conn = await this.client.acquireRawConnection();
        await conn.query(`LISTEN ${CHANNEL}`);
      } catch (err) {
        if (conn) this.destroy(conn);
        this.failed(err);
        return;
      }
      if (!this.listeners.size) {
        this.destroy(conn);
        return;
      }
      this.conn = conn;
      this.retry = 0;
      conn.on('notification', (m) => this.notify(m));
      // A server that goes away emits 'error' on an idle connection: handled, not a crash.
      conn.on('error', (err) => this.lost(conn, err));
      conn.on('end', () => this.lost(conn, null));
      // Changes committed while there was no LISTEN: everyone looks again.
      this.emit(null);
    })().finally(() => {
      this.connecting = null;
    });
  }

  notify(m) {
    if (m.channel !== CHANNEL) return;
    const [u, b] = String(m.payload || '').split(':');
    const userId = Number(u);
    const mailboxId = Number(b);
    if (!Number.isInteger(userId) || !Number.isInteger(mailboxId)) return;
    this.emit({ userId, mailboxId });
  }

  emit(change) {
    for (const fn of [...this.listeners]) {
      try {
        fn(change);
      } catch (err) {
        if (this.log) this.log.warn({ err: err.message }, 'mailbox change listener failed');
      }
    }
  }

  lost(conn, err) {
    if (this.conn !== conn) return;
    this.conn = null;
    this.destroy(conn);
    this.failed(err);
  }

  failed(err) {
    if (this.log) this.log.warn({ err: err ? err.message : 'closed' }, 'mailbox LISTEN lost');
    this.emit(null);
    if (!this.listeners.size || this.timer) return;
    const ms = RETRY_MS[Math.min(this.retry++, RETRY_MS.length - 1)];
    this.timer = setTimeout(() => this.connect(), ms);
    this.timer.unref();
  }

  destroy(conn) {
    Promise.resolve(this.client.destroyRawConnection(conn)).catch(() => {});
  }

  /** Stops listening (the last subscriber left, or the store closes). */
  close() {
    clearTimeout(this.timer);
    this.timer = null;
    const conn = this.conn;
    this.conn = null;
    if (conn) this.destroy(conn);
  }
}

module.exports = { MailboxChangeFeed, CHANNEL };
