'use strict';

/*
 * Change detection for IDLE (RFC 2177): one watch per (user, mailbox), shared by every session
 * idling on it, however many there are. A look reads the mailbox's UIDNEXT and HIGHESTMODSEQ
 * through the service; when either moved, each watching session runs its own sync
 * (updates.js) and pushes the untagged responses.
 *
 * Push first: the service's change feed (PostgreSQL LISTEN/NOTIFY on one connection per
 * process, `service.onMailboxChange`) names the mailbox a commit changed, in whatever process
 * it was made (another IMAP server, the HTTP API, LMTP, an import), and that mailbox is looked
 * at at once. The poll every IMAP_IDLE_POLL_MS stays as the fallback (a lost connection, a
 * database that cannot notify). Keeps the IMAP layer free of SQL.
 */

class MailboxWatcher {
  /**
   * @param {{intervalMs: number, log: object, changes?: ((fn: Function) => () => void)|null}} o
   *   changes: subscribes to committed mailbox changes (service.onMailboxChange), when the
   *   service has them
   */
  constructor(o) {
    this.intervalMs = o.intervalMs;
    this.log = o.log;
    this.changes = o.changes || null;
    this.unsubscribe = null;
    this.entries = new Map();
  }

  /**
   * Calls onChange(status) whenever the mailbox's status changes (and once at the first look),
   * until the returned function is called.
   * @param {string} user
   * @param {string} mailbox
   * @param {object} be a backend of that user (used for the shared look)
   * @param {(status: object) => void} onChange
   * @returns {() => void} stop
   */
  watch(user, mailbox, be, onChange) {
    const key = `${user}\0${mailbox}`;
    let e = this.entries.get(key);
    if (!e) {
      e = {
        be,
        listeners: new Set(),
        last: null,
        timer: null,
        busy: false,
        again: false,
        identity: null,
      };
      this.entries.set(key, e);
      e.timer = setInterval(() => this.poll(key, e), this.intervalMs);
      e.timer.unref();
      this.listen();
    }
    e.listeners.add(onChange);
    return () => {
      e.listeners.delete(onChange);
      if (!e.listeners.size) {
        clearInterval(e.timer);
        if (this.entries.get(key) === e) this.entries.delete(key);
        if (!this.entries.size) this.unlisten();
      }
    };
  }

  /** Subscribes to the change feed while anything is watched (one subscription per server). */
  listen() {
    if (this.unsubscribe || !this.changes) return;
    try {
      this.unsubscribe = this.changes((change) => this.changed(change));
    } catch (err) {
      this.log.warn({ err: err.message }, 'mailbox change feed unavailable; polling only');
    }
  }

  unlisten() {
    if (this.unsubscribe) this.unsubscribe();
    this.unsubscribe = null;
  }

  /**
   * A committed change: the watched entry of that mailbox looks now. Mailbox ids are unique
   * across users; an entry whose identity is not known yet looks too. `null` (changes may
   * have been missed): every entry looks.
   * @param {{mailboxId: number}|null} change
   */
  changed(change) {
    const id = change ? String(change.mailboxId) : null;
    for (const [key, e] of this.entries) {
      if (id === null || e.identity === null || e.identity === id) this.poll(key, e);
    }
  }

  async poll(key, e) {
    if (e.busy) {
      // A change committed while a look is in flight may postdate what it read: look again.
      e.again = true;
      return;
    }
    e.busy = true;
    try {
      do {
        e.again = false;
        const st = await e.be.status(key.split('\0')[1], { warm: false });
        if (st.identity != null) e.identity = String(st.identity);
        const mark = `${st.uidnext}/${st.highestModseq}/${st.total}`;
        // The first look is passed on too: a listener compares it with its own view, so a
        // change made between its last sync and this look is not missed.
        if (mark !== e.last) for (const fn of [...e.listeners]) fn(st);
        e.last = mark;
      } while (e.again && e.listeners.size);
    } catch (err) {
      this.log.debug({ err: err.message }, 'idle poll failed');
    } finally {
      e.busy = false;
    }
  }

  close() {
    for (const e of this.entries.values()) clearInterval(e.timer);
    this.entries.clear();
    this.unlisten();
  }
}

module.exports = { MailboxWatcher };
