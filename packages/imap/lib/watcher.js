'use strict';

/*
 * Change detection for IDLE (RFC 2177): one poll per watched (user, mailbox), shared by every
 * session idling on it, however many there are. A poll reads the mailbox's UIDNEXT and
 * HIGHESTMODSEQ through the service; when either moved, each watching session runs its own
 * sync (updates.js) and pushes the untagged responses. Polling keeps the IMAP layer free of
 * SQL; the interval bounds the delay (IMAP_IDLE_POLL_MS).
 */

class MailboxWatcher {
  /**
   * @param {{intervalMs: number, log: object}} o
   */
  constructor(o) {
    this.intervalMs = o.intervalMs;
    this.log = o.log;
    this.entries = new Map();
  }

  /**
   * Calls onChange(status) whenever the mailbox's status changes (and once at the first poll),
   * until the returned function is called.
   * @param {string} user
   * @param {string} mailbox
   * @param {object} be a backend of that user (used for the shared poll)
   * @param {(status: object) => void} onChange
   * @returns {() => void} stop
   */
  watch(user, mailbox, be, onChange) {
    const key = `${user}\0${mailbox}`;
    let e = this.entries.get(key);
    if (!e) {
      e = { be, listeners: new Set(), last: null, timer: null, busy: false };
      this.entries.set(key, e);
      e.timer = setInterval(() => this.poll(key, e), this.intervalMs);
      e.timer.unref();
    }
    e.listeners.add(onChange);
    return () => {
      e.listeners.delete(onChange);
      if (!e.listeners.size) {
        clearInterval(e.timer);
        if (this.entries.get(key) === e) this.entries.delete(key);
      }
    };
  }

  async poll(key, e) {
    if (e.busy) return;
    e.busy = true;
    try {
      const st = await e.be.status(key.split('\0')[1], { warm: false });
      const mark = `${st.uidnext}/${st.highestModseq}/${st.total}`;
      // The first poll is passed on too: a listener compares it with its own view, so a
      // change made between its last sync and this poll is not missed.
      if (mark !== e.last) for (const fn of [...e.listeners]) fn(st);
      e.last = mark;
    } catch (err) {
      this.log.debug({ err: err.message }, 'idle poll failed');
    } finally {
      e.busy = false;
    }
  }

  close() {
    for (const e of this.entries.values()) clearInterval(e.timer);
    this.entries.clear();
  }
}

module.exports = { MailboxWatcher };
