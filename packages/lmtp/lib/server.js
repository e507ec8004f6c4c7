'use strict';

/*
 * The listening side of LMTP (RFC 2033): TCP and unix sockets, STARTTLS when a certificate is
 * set, and the bounds that hold before a connection costs anything (connections in total and
 * per client address, line length, message size, recipients per transaction, idle timeout).
 * It owns no mail logic: sessions deliver through the mail service's `delivery` operations.
 */

const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const tls = require('node:tls');
const { Session } = require('./session');
const { DEFAULT_LIMITS } = require('./protocol/framer');
const { reply } = require('./protocol/replies');

const DEFAULTS = Object.freeze({
  ...DEFAULT_LIMITS,
  maxRecipients: 100, // per transaction (RFC 5321 4.5.3.1.8 asks for at least 100)
  maxConnections: 500,
  maxConnectionsPerAddress: 50, // Postfix opens up to 20 per destination by default
  idleTimeout: 5 * 60 * 1000, // RFC 5321 4.5.3.2.7: the server waits 5 minutes for a command
});

class LmtpServer {
  /**
   * @param {object} opts
   * @param {object} opts.service a @mailgate/service MailService (its `delivery`: resolve,
   *   deliver, outcomeOf)
   * @param {import('pino').Logger} [opts.logger]
   * @param {Partial<typeof DEFAULTS>} [opts.limits]
   * @param {{key: Buffer|string, cert: Buffer|string}|null} [opts.tls] enables STARTTLS
   * @param {string} [opts.hostname] the name in the greeting and LHLO reply
   */
  constructor(opts) {
    this.service = opts.service;
    this.log = opts.logger || silentLogger();
    this.limits = { ...DEFAULTS, ...(opts.limits || {}) };
    this.tlsContext = opts.tls ? tls.createSecureContext(opts.tls) : null;
    this.hostname = opts.hostname || os.hostname();
    this.sessions = new Set();
    this.perAddress = new Map();
    this.servers = [];
    this.nextId = 1;
    this.closing = false;
  }

  /**
   * Starts listening on a TCP port or a unix socket path (a stale socket file left by a
   * process that died is replaced; one another server answers on is PORT_IN_USE-like EADDRINUSE).
   * @param {{port?: number, host?: string, path?: string}} o
   * @returns {Promise<{port?: number, host?: string, path?: string}>}
   */
  async listen(o = {}) {
    const srv = net.createServer((s) => this.accept(s));
    if (o.path) await removeStaleSocket(o.path);
    await new Promise((resolve, reject) => {
      srv.once('error', reject);
      const done = () => {
        srv.off('error', reject);
        resolve();
      };
      if (o.path) srv.listen(o.path, done);
      else srv.listen(o.port ?? 2424, o.host || '127.0.0.1', done);
    });
    srv.on('error', (err) => this.log.error({ err: err.message }, 'lmtp listener error'));
    this.servers.push(srv);
    if (o.path) return { path: o.path };
    const a = srv.address();
    return { port: a.port, host: a.address };
  }

  accept(socket) {
    const key = socket.remoteAddress || 'local';
    const n = this.perAddress.get(key) || 0;
    if (this.closing || this.sessions.size >= this.limits.maxConnections) {
      socket.on('error', () => {});
      return socket.end(reply(421, '4.3.2', 'Too many connections, try again later'));
    }
    if (n >= this.limits.maxConnectionsPerAddress) {
      socket.on('error', () => {});
      return socket.end(reply(421, '4.7.0', 'Too many connections from your address'));
    }
    this.perAddress.set(key, n + 1);
    if (typeof socket.setNoDelay === 'function') socket.setNoDelay(true);
    const s = new Session(this, socket, { id: this.nextId++, secure: false });
    s.addressKey = key;
    this.sessions.add(s);
    s.greet();
  }

  /** A session ended: its slots are free again. */
  forget(s) {
    if (!this.sessions.delete(s)) return;
    const n = (this.perAddress.get(s.addressKey) || 1) - 1;
    if (n <= 0) this.perAddress.delete(s.addressKey);
    else this.perAddress.set(s.addressKey, n);
  }

  /**
   * Stops accepting, says 421 to idle sessions, waits for deliveries in progress (they end
   * with their replies) up to graceMs, then closes what is left.
   * @param {{graceMs?: number}} [o]
   */
  async close(o = {}) {
    this.closing = true;
    const stopped = Promise.all(
      this.servers.map((srv) => new Promise((r) => srv.close(() => r()))),
    );
    const deadline = Date.now() + (o.graceMs ?? 10000);
    for (;;) {
      for (const s of this.sessions) {
        if (!s.busy) {
          s.write(reply(421, '4.3.2', `${this.hostname} Service shutting down`));
          s.close();
        }
      }
      if (!this.sessions.size || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    for (const s of this.sessions) {
      s.socket.destroy();
      s.ended();
    }
    await stopped;
  }
}

async function removeStaleSocket(path) {
  let st;
  try {
    st = fs.lstatSync(path);
  } catch {
    return;
  }
  if (!st.isSocket()) return; // listen's EADDRINUSE names it
  const live = await new Promise((resolve) => {
    const c = net.connect(path);
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
  if (!live) fs.unlinkSync(path);
}

function silentLogger() {
  const noop = () => {};
  const l = { debug: noop, info: noop, warn: noop, error: noop, child: () => l };
  return l;
}

module.exports = { LmtpServer, DEFAULTS };
