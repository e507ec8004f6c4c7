'use strict';

/*
 * One client connection: the session state machine (RFC 3501 3: not authenticated →
 * authenticated → selected → logout), the command queue, the writer side of the socket, and
 * the untagged updates other sessions' changes cause. It dispatches each parsed command to its
 * module in commands/ by name; it never reads the store itself except through the backend the
 * commands use. Commands run one at a time, in order; bytes arriving meanwhile are framed and
 * queued (bounded: the socket is paused when the queue is long).
 */

const { CommandFramer } = require('./protocol/framer');
const { parseCommand, ParseError } = require('./protocol/parser');
const { responseLine, responseChunks, safeText, atom } = require('./protocol/writer');
const { answerFor } = require('./errors');
const { commands } = require('./commands');
const { syncView } = require('./updates');

const MAX_QUEUE = 64;

class Session {
  /**
   * @param {import('./server').ImapServer} server
   * @param {import('node:net').Socket} socket
   * @param {{secure: boolean, id: number}} opts
   */
  constructor(server, socket, opts) {
    this.server = server;
    this.socket = socket;
    this.id = opts.id;
    this.secure = opts.secure;
    this.log = server.log.child({ session: opts.id });
    this.state = 'notauth';
    this.user = null;
    this.backend = null;
    this.view = null;
    this.enabled = new Set(); // ENABLEd extensions (RFC 5161): CONDSTORE, QRESYNC
    this.condstore = false; // CONDSTORE active (RFC 7162 3.1: enabled by use, too)
    this.framer = new CommandFramer(this.framerLimits());
    this.preauthBytes = 0;
    this.queue = [];
    this.busy = false;
    this.lineWaiter = null;
    this.closed = false;
    this.idleTimer = null;
    this.proxied = null; // the upstream of a relayed session (proxy.js)
    this.handoff = null;
    this.heldOutput = 0; // corks kept until the tagged response (holdOutput)
    this.onData = (chunk) => this.receive(chunk);
    this.attach(socket);
  }

  attach(socket) {
    this.socket = socket;
    socket.on('data', this.onData);
    socket.on('error', (err) => this.log.debug({ err: err.message }, 'socket error'));
    socket.on('close', () => this.cleanup());
  }

  /** Loopback or TLS: where plaintext passwords may be sent (RFC 3501 6.2.3 LOGINDISABLED). */
  get privacyOk() {
    if (this.secure) return true;
    if (!this.server.trustLoopback) return false;
    // All of 127.0.0.0/8 is loopback (RFC 1122 3.2.1.3), not only 127.0.0.1.
    const a = this.socket.remoteAddress || '';
    return a === '::1' || /^(::ffff:)?127\./.test(a);
  }

  /**
   * Why a plaintext password is refused here, with the way out this server actually offers:
   * STARTTLS when it has a certificate; without one, no client can follow that advice.
   * @param {string} what 'login' or 'authentication'
   */
  privacyRequired(what) {
    return this.server.tlsContext
      ? `Plaintext ${what} is disabled; use STARTTLS`
      : `Plaintext ${what} is disabled off loopback, and this server has no TLS certificate (IMAP_TLS_CERT, IMAP_TLS_KEY)`;
  }

  greet() {
    this.resetTimer();
    this.send(
      responseLine('*', [
        atom(
          `OK [CAPABILITY ${this.server.capabilities(this).join(' ')}] mailgate IMAP4rev1 ready`,
        ),
      ]),
    );
  }

  /**
   * The framer's limits for the session's state: the small pre-login ones until the session
   * is authenticated (server.js PREAUTH_LIMITS), then the full ones.
   * @returns {{maxLine: number, maxLiteral: number, maxCommand: number}}
   */
  framerLimits() {
    const l = this.server.limits;
    if (this.state !== 'notauth') {
      return { maxLine: l.maxLine, maxLiteral: l.maxLiteral, maxCommand: l.maxCommand };
    }
    return {
      maxLine: Math.min(l.maxLine, l.preauthMaxLine),
      maxLiteral: Math.min(l.maxLiteral, l.preauthMaxLiteral),
      maxCommand: Math.min(l.maxCommand, l.preauthMaxCommand),
    };
  }

  /**
   * Called once the session is authenticated: full limits for the commands framed from now
   * on (ones a client pipelined behind its LOGIN were framed with the pre-login limits), the
   * idle timer instead of the login deadline, and its pre-login slot given back.
   */
  loggedIn() {
    if (this.closed) return;
    this.framer.limits = { ...this.framer.limits, ...this.framerLimits() };
    this.server.leftPreauth(this);
    this.resetTimer();
  }

  receive(chunk) {
    // After BYE the socket lingers until the client closes it (cleanup): its bytes are dropped.
    if (this.closed) return;
    if (this.state === 'notauth') {
      // Before login, bytes neither extend the login deadline nor may they add up without end.
      this.preauthBytes += chunk.length;
      if (this.preauthBytes > this.server.limits.preauthMaxBytes) {
        this.bye('Too much data before authentication');
        return;
      }
    } else this.resetTimer();
    let events;
    try {
      events = this.framer.feed(chunk);
    } catch (err) {
      this.log.error({ err }, 'framer failed');
      return this.bye('Internal error');
    }
    for (const ev of events) {
      if (ev.type === 'continue') {
        this.send(Buffer.from('+ Ready for literal data\r\n'));
      } else if (ev.type === 'fatal') {
        this.bye(ev.text);
        return;
      } else if (this.lineWaiter && ev.type === 'command') {
        const w = this.lineWaiter;
        this.lineWaiter = null;
        w(ev.parts.filter((p) => typeof p === 'string').join(''));
      } else {
        this.queue.push(ev);
      }
    }
    if (this.queue.length > MAX_QUEUE) this.socket.pause();
    this.pump();
  }

  /**
   * The next line the client sends, raw (IDLE's DONE, an AUTHENTICATE response).
   * @returns {Promise<string|null>} null when the connection closes first
   */
  readLine() {
    const next = this.queue.shift();
    if (next && next.type === 'command') {
      return Promise.resolve(next.parts.filter((p) => typeof p === 'string').join(''));
    }
    if (next) this.queue.unshift(next);
    if (this.closed) return Promise.resolve(null);
    return new Promise((resolve) => {
      this.lineWaiter = resolve;
    });
  }

  async pump() {
    if (this.busy) return;
    this.busy = true;
    try {
      while (this.queue.length && !this.closed && !this.proxied) {
        const ev = this.queue.shift();
        if (this.queue.length < MAX_QUEUE / 2 && this.socket.isPaused()) this.socket.resume();
        await this.run(ev);
      }
    } finally {
      this.busy = false;
    }
  }

  async run(ev) {
    try {
      await this.runCommand(ev);
    } finally {
      this.releaseOutput();
    }
  }

  /**
   * Keeps the socket corked (the caller corked it) until the command's tagged response is
   * written: a short answer (FETCH of one message) then leaves in one socket write with its
   * tagged OK, not in two (issue 35.4: each write is a segment with TCP_NODELAY, and a client
   * reading to the tagged OK wakes for each).
   */
  holdOutput() {
    this.heldOutput++;
  }

  /** Uncorks what holdOutput kept corked. */
  releaseOutput() {
    while (this.heldOutput > 0) {
      this.heldOutput--;
      if (!this.socket.destroyed) this.socket.uncork();
    }
  }

  async runCommand(ev) {
    if (ev.type === 'error') {
      const code = ev.reason === 'literal-too-large' ? 'TOOBIG' : null;
      this.tagged(ev.tag, 'BAD', ev.text, code);
      return;
    }
    let cmd;
    try {
      cmd = parseCommand(ev.parts);
    } catch (err) {
      if (!(err instanceof ParseError)) throw err;
      this.tagged(err.tag, 'BAD', err.message);
      return;
    }
    const mod = commands.get(cmd.name);
    if (!mod) {
      this.tagged(cmd.tag, 'BAD', 'Unknown command');
      return;
    }
    if (!mod.states.includes(this.state)) {
      this.tagged(cmd.tag, 'BAD', `${cmd.name} not allowed now`);
      return;
    }
    const t0 = process.hrtime.bigint();
    // A command may cork the socket while it writes (FETCH batches); if it throws there, the
    // corks it took must go before the tagged answer, or that answer never leaves the socket.
    const corked = this.socket.writableCorked;
    let answer;
    try {
      // A command that checks its view itself (FETCH: with the read of the bytes, one round
      // trip) does so before it reads anything.
      const selfChecks =
        typeof mod.checksView === 'function' ? mod.checksView(cmd) : !!mod.checksView;
      if (
        mod.usesView &&
        cmd.name !== 'UNSELECT' &&
        !selfChecks &&
        !(await this.viewStillSelected())
      )
        return;
      const res = (await mod.run(this, cmd)) || {};
      if (this.closed || res.answered) return;
      // After a command that only reads (FETCH, SEARCH), the status read by the check above
      // serves the sync too, unless the command wrote (a FETCH that sets \Seen marks
      // `checked.wrote`): one round trip less per command. A change another session makes meanwhile
      // is reported at the next command, as RFC 3501 7 allows.
      const pre = this.checked;
      const readsOnly = typeof mod.readsOnly === 'function' ? mod.readsOnly(cmd) : !!mod.readsOnly;
      const status =
        readsOnly &&
        pre &&
        !pre.wrote &&
        pre.view === this.view &&
        this.view.own.size === 0 &&
        this.view.modseq === pre.modseq
          ? pre.status
          : null;
      // RFC 3501 7.4.1: no EXPUNGE during FETCH, STORE or SEARCH (sequence numbers in use).
      // A FETCH answered from the body cache alone skips it too (fetch.js fromCache).
      if (this.view && mod.sync !== false && !res.skipSync) {
        await this.sync({ expunges: mod.expunges !== false, status });
      }
      answer = { status: 'OK', code: res.code || null, text: res.text || `${cmd.name} completed` };
    } catch (err) {
      if (this.closed) return;
      while (this.socket.writableCorked > corked + this.heldOutput) this.socket.uncork();
      answer = answerFor(err, this.log);
    } finally {
      this.checked = null;
    }
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    this.log.debug({ command: cmd.name, status: answer.status, ms }, 'imap command');
    if (answer.status === 'BYE') return;
    this.tagged(cmd.tag, answer.status, answer.text, answer.code);
    this.releaseOutput();
    if (this.handoff) {
      // A proxied login (proxy.js): from here on the socket is relayed, not parsed.
      const handoff = this.handoff;
      this.handoff = null;
      handoff();
    }
  }

  /**
   * The selected mailbox is still the one this session opened: the service names mailboxes,
   * and another session may have renamed it away and given its name to another mailbox (or
   * deleted it). Commands that read or change messages by number would then act on the wrong
   * mailbox's messages under this view's UIDs, which RFC 3501 2.3.1.1 forbids within one
   * UIDVALIDITY. A changed UIDVALIDITY or mailbox identity, or a missing mailbox, ends the session with BYE, as
   * Dovecot does when the selected mailbox is renamed or deleted under a session.
   * @param {object|null} [known] the mailbox's status as the command's own statement read it
   *   just now (null: no such mailbox); read here when absent
   * @returns {Promise<boolean>} false when the session was closed
   */
  async viewStillSelected(known) {
    const v = this.view;
    let status = known === undefined ? null : known;
    if (known === undefined) {
      try {
        status = await this.backend.status(v.name, { counts: false });
      } catch (err) {
        if (!err || err.code !== 'MAILBOX_NOT_FOUND') throw err;
      }
    }
    // UIDVALIDITY alone cannot tell two mailboxes apart: ones created in the same second, or
    // keeping their upstream's values (import imap, dovecot-uidlist), may share it.
    const same =
      status &&
      Number(status.uidvalidity) === Number(v.uidvalidity) &&
      (v.identity == null || String(status.identity) === v.identity);
    if (same) {
      // Kept for this command only (knownStatus, and the sync after a read-only command).
      this.checked = { view: v, status, modseq: v.modseq };
      return true;
    }
    this.log.debug({ mailbox: v.name }, 'selected mailbox renamed or deleted');
    this.bye('Selected mailbox was renamed or deleted');
    return false;
  }

  /**
   * The selected mailbox's status as the check before the running command read it, or null:
   * a hint for reads of its rows in the same command (mail-data.js), never kept past it.
   * @returns {object|null}
   */
  knownStatus() {
    const c = this.checked;
    return c && c.view === this.view ? c.status : null;
  }

  /** Pushes other sessions' changes to the client as untagged responses. */
  async sync(opts = {}) {
    if (!this.view) return;
    await syncView(this, opts);
  }

  tagged(tag, status, text, code) {
    const t = `${status} ${code ? `[${code}] ` : ''}${safeText(text)}`;
    this.send(Buffer.from(`${tag} ${t}\r\n`, 'latin1'));
  }

  /**
   * Writes one untagged response. A response with literals (FETCH of message bytes) is written
   * as its pieces under one cork: the literals' Buffers go to the socket as they are (one
   * writev), not copied into one more Buffer first.
   * @param {any[]} parts values after `*` (see writer.js)
   */
  untagged(parts) {
    const chunks = responseChunks('*', parts);
    if (chunks.length === 1) return this.send(chunks[0]);
    if (this.closed || this.socket.destroyed) return false;
    this.socket.cork();
    let ok = true;
    for (const c of chunks) if (c.length) ok = this.socket.write(c);
    this.socket.uncork();
    return ok;
  }

  send(buf) {
    if (this.closed || this.socket.destroyed) return false;
    return this.socket.write(buf);
  }

  /** More than maxUnsentBytes written to the client and not yet taken by it. */
  outputFull() {
    return this.socket.writableLength > this.server.limits.maxUnsentBytes;
  }

  /**
   * Waits until the client has read what was sent (untagged updates, updates.js). A client
   * that reads nothing for outputStallTimeout is disconnected, as Dovecot does: no BYE, which
   * would only queue behind the bytes it does not read. Until 2026-11-27 updates were written
   * whatever the client read: 200 non-reading IDLE sessions grew the process by ~100 MB per
   * flag change of a large mailbox (issue 29).
   * @returns {Promise<boolean>} false when the session is closed
   */
  async backpressure() {
    if (this.closed) return false;
    // Output held for the tagged response (holdOutput) would never drain while corked.
    this.releaseOutput();
    let timer;
    const drained = await Promise.race([
      this.drain().then(() => true),
      new Promise((resolve) => {
        timer = setTimeout(() => resolve(false), this.server.limits.outputStallTimeout);
      }),
    ]);
    clearTimeout(timer);
    if (!drained && !this.closed) {
      this.log.info(
        { unsent: this.socket.writableLength },
        'imap: client does not read its updates; disconnected',
      );
      this.socket.destroy();
      this.cleanup();
    }
    return !this.closed;
  }

  /** Waits while the socket's write buffer is full (large FETCH answers). */
  async drain() {
    this.releaseOutput(); // held output must be flushed to ever drain
    if (this.closed || !this.socket.writableNeedDrain) return;
    await new Promise((resolve) => {
      const done = () => {
        this.socket.off('drain', done);
        this.socket.off('close', done);
        resolve();
      };
      this.socket.on('drain', done);
      this.socket.on('close', done);
    });
  }

  resetTimer() {
    clearTimeout(this.idleTimer);
    if (this.closed || this.proxied) return;
    // RFC 3501 5.4: at least 30 minutes once authenticated; a shorter wait before login.
    const ms =
      this.state === 'notauth' ? this.server.limits.preauthTimeout : this.server.limits.idleTimeout;
    this.idleTimer = setTimeout(() => this.bye('Autologout; idle for too long'), ms);
    this.idleTimer.unref();
  }

  /** Sends `* BYE` and closes. */
  bye(text) {
    if (this.closed) return;
    this.send(Buffer.from(`* BYE ${safeText(text)}\r\n`));
    this.socket.end();
    this.cleanup();
  }

  cleanup() {
    if (this.closed) return;
    this.closed = true;
    this.state = 'logout';
    clearTimeout(this.idleTimer);
    if (this.lineWaiter) {
      const w = this.lineWaiter;
      this.lineWaiter = null;
      w(null);
    }
    if (this.idleStop) this.idleStop();
    this.server.sessionClosed(this);
    const be = this.backend;
    this.backend = null;
    if (be && typeof be.close === 'function') {
      Promise.resolve(be.close()).catch((err) =>
        this.log.debug({ err: err.message }, 'backend close'),
      );
    }
    setTimeout(() => this.socket.destroy(), 1000).unref();
  }
}

module.exports = { Session };
