'use strict';

/*
 * One LMTP connection: feeds the socket's bytes to the framer, takes one item at a time
 * (PIPELINING: a command is answered before the next is read; the answers of a pipelined group
 * leave in one write), dispatches command lines to
 * commands/<name>.js and delivers finished messages through the mail service's delivery
 * operations. It owns the transaction state and the idle timer; it never touches the store.
 */

const tls = require('node:tls');
const { LmtpFramer } = require('./protocol/framer');
const { parseCommand } = require('./protocol/parser');
const { reply, outcomeReply, relayedReply } = require('./protocol/replies');
const { COMMANDS } = require('./commands');

// Bytes of pipelined input held while a command runs (above it the socket is paused), and of
// replies the client has not read yet (above it no further command is taken until they drain):
// a client that pipelines without reading cannot make the server buffer without bound.
const MAX_PENDING = 256 * 1024;

// Replies of one pipelined group are written together (issue 32: CPU per delivery). Each
// socket write on loopback is a system call that also runs the receiving side's TCP path, and
// an MTA's PIPELINING group MAIL/RCPT/DATA got three of them: a third of the serve process's
// CPU per delivery went to socket writes (bench/results/deliver-2026-11-28-profile.md). Held
// replies are sent when no further command is buffered (the client waits for them), after
// each recipient's outcome (a 250 leaves as soon as its commit is done, as before), before
// STARTTLS's handshake and a close, and past this many bytes.
const FLUSH_AT = 16 * 1024;

class Session {
  /**
   * @param {import('./server').LmtpServer} server
   * @param {import('node:net').Socket} socket
   * @param {{id: number, secure: boolean}} o
   */
  constructor(server, socket, o) {
    this.server = server;
    this.service = server.service;
    this.limits = server.limits;
    this.log = server.log.child({ session: o.id });
    this.secure = o.secure;
    this.framer = new LmtpFramer({
      maxLine: this.limits.maxLine,
      maxMessage: this.limits.maxMessage,
    });
    this.lhlo = false;
    this.tx = null;
    this.pendingChunk = null;
    /** Replies written while a command runs, not yet on the socket (flush). */
    this.held = [];
    this.heldBytes = 0;
    this.busy = false;
    this.closed = false;
    this.attach(socket);
  }

  attach(socket) {
    this.socket = socket;
    socket.setTimeout(this.limits.idleTimeout);
    socket.on('data', (this.onData = (d) => this.receive(d)));
    socket.on(
      'timeout',
      (this.onTimeout = () => {
        if (this.busy) return; // a delivery in progress is not the client's idleness
        this.write(reply(421, '4.4.2', `${this.server.hostname} Idle timeout, closing`));
        this.close();
      }),
    );
    socket.on(
      'error',
      (this.onError = (err) => this.log.debug({ err: err.message }, 'lmtp socket')),
    );
    socket.on('close', (this.onClose = () => this.closed || this.ended()));
  }

  detach(socket) {
    socket.off('data', this.onData);
    socket.off('timeout', this.onTimeout);
    socket.off('error', this.onError);
    socket.off('close', this.onClose);
    socket.setTimeout(0);
  }

  greet() {
    this.write(reply(220, null, `${this.server.hostname} LMTP mailgate ready`));
  }

  /**
   * Queues a reply: sent at once outside a command, held while one runs (pump flushes when no
   * further command is buffered).
   * @param {string} text
   */
  write(text) {
    if (this.closed || !this.socket.writable) return;
    this.held.push(text);
    this.heldBytes += text.length;
    if (!this.busy || this.heldBytes >= FLUSH_AT) this.flush();
  }

  /** Sends the held replies in one write. */
  flush() {
    if (!this.held.length) return;
    const text = this.held.length === 1 ? this.held[0] : this.held.join('');
    this.held = [];
    this.heldBytes = 0;
    if (!this.closed && this.socket.writable) this.socket.write(text);
  }

  resetTransaction() {
    this.tx = null;
  }

  receive(chunk) {
    this.framer.push(chunk);
    if (this.busy && this.framer.buffered > MAX_PENDING) this.socket.pause();
    this.pump();
  }

  async pump() {
    if (this.busy) return;
    this.busy = true;
    try {
      while (!this.closed) {
        if (this.socket.writableLength > MAX_PENDING) {
          this.flush();
          await this.drained();
        }
        if (this.closed) break;
        const item = this.framer.next();
        if (!item) break;
        await this.handle(item);
      }
    } catch (err) {
      this.log.error({ err }, 'lmtp session failed');
      this.write(reply(421, '4.3.0', 'Internal error, closing'));
      this.close();
    } finally {
      this.flush();
      this.busy = false;
      if (!this.closed) this.socket.resume();
    }
  }

  /** Resolves once the replies written so far went out, or the connection ended. */
  drained() {
    return new Promise((resolve) => {
      const done = () => {
        this.socket.off('drain', done);
        this.socket.off('close', done);
        resolve();
      };
      this.socket.on('drain', done);
      this.socket.on('close', done);
    });
  }

  async handle(item) {
    if (item.type === 'toolong') return this.write(reply(500, '5.5.2', 'Line too long'));
    if (item.type === 'data') return COMMANDS.DATA.finish(this);
    if (item.type === 'chunk') return COMMANDS.BDAT.finish(this);
    const { verb, rest } = parseCommand(item.text);
    if (verb === 'HELO' || verb === 'EHLO') {
      return this.write(reply(500, '5.5.1', 'This is LMTP: use LHLO'));
    }
    const cmd = COMMANDS[verb];
    if (!cmd) return this.write(reply(500, '5.5.2', 'Unknown command'));
    if (cmd.needsLhlo !== false && !this.lhlo) return this.write(reply(503, '5.5.1', 'LHLO first'));
    await cmd.run(this, rest);
  }

  /**
   * Stores the finished message for every accepted recipient, in RCPT order, and answers each
   * (RFC 2033 4.2): 250 only after its commit (or, for a proxied user relayed upstream, only
   * after the upstream's 250), 4xx for anything transient. The transaction ends either way.
   * @param {Buffer|null} raw null when the message went over the size limit
   */
  async deliverAll(raw) {
    const tx = this.tx;
    this.tx = null;
    for (const rcpt of tx.rcpts) {
      if (this.closed) return; // nothing more is answered: the MTA retries the unanswered ones
      if (!raw) {
        this.write(outcomeReply('toobig', rcpt.address));
        continue;
      }
      try {
        const r = await this.service.delivery.deliver(rcpt, raw, { sender: tx.sender });
        if (r.relayed) {
          // A proxied user's mail, handed to their old server: its reply is the answer.
          this.log.info(
            { user: rcpt.user.name, upstream: r.upstream, code: r.relayed.code, size: raw.length },
            'lmtp relayed',
          );
          this.write(relayedReply(r.relayed, rcpt.address));
          this.flush();
          continue;
        }
        this.log.info(
          { user: rcpt.user.name, mailbox: r.mailbox, uid: r.uid, size: raw.length },
          'lmtp delivered',
        );
        this.write(outcomeReply('stored', rcpt.address));
        this.flush();
      } catch (err) {
        const outcome = this.service.delivery.outcomeOf(err);
        this.log.warn(
          { user: rcpt.user.name, code: err.code, err: err.message },
          'lmtp not delivered',
        );
        this.write(outcomeReply(outcome, rcpt.address));
        this.flush();
      }
    }
  }

  /** Upgrades the connection after `220 Ready to start TLS` (RFC 3207 4.2: state resets). */
  startTls() {
    this.flush(); // the 220 goes out in the clear, before the handshake
    const plain = this.socket;
    this.detach(plain);
    // Bytes pipelined after STARTTLS were sent in the clear: dropped (RFC 3207 5).
    this.framer = new LmtpFramer({
      maxLine: this.limits.maxLine,
      maxMessage: this.limits.maxMessage,
    });
    this.lhlo = false;
    this.tx = null;
    const secure = new tls.TLSSocket(plain, {
      isServer: true,
      secureContext: this.server.tlsContext,
    });
    this.secure = true;
    this.attach(secure);
    plain.on('close', () => this.closed || this.ended());
  }

  /** Ends the connection after what was written so far. */
  close() {
    if (this.closed) return;
    this.flush();
    this.socket.end();
    this.ended();
  }

  ended() {
    if (this.closed) return;
    this.closed = true;
    this.server.forget(this);
  }
}

module.exports = { Session, MAX_PENDING };
