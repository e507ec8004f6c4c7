'use strict';

/*
 * The listening side: accepts connections (plain, STARTTLS-capable, or implicit TLS), creates
 * a Session per connection, authenticates users against the mail service with the shared
 * failed-login limiter, enforces per-user connection limits, and says `* BYE` to every
 * session on shutdown. It owns no mail logic: sessions reach mail only through
 * `service.openBackend('pg', user)`, or are relayed upstream when the user's route is `proxy`.
 */

const net = require('node:net');
const tls = require('node:tls');
const { Session } = require('./session');
const { DEFAULT_LIMITS } = require('./protocol/framer');
const { LoginLimiter, loadConfig } = require('@mailgate/core');
const { BodyCache } = require('./body-cache');
const { ListViewCache } = require('./list-view-cache');
const { MailboxWatcher } = require('./watcher');
const { checkRoutes, closeRelayed } = require('./proxy');
const { warmUp } = require('./warm-up');

// Before authentication a client needs a few short lines (CAPABILITY, STARTTLS, ID, LOGIN or
// AUTHENTICATE): literals, lines and the whole exchange are kept small, as Dovecot's login
// process does, so that a connection that never logs in costs kilobytes, not the 64 MiB an
// APPEND may carry (issue 29: 16 such connections took the process from 850 MB to 2.25 GB).
const PREAUTH_LIMITS = Object.freeze({
  preauthMaxLine: 8 * 1024,
  preauthMaxLiteral: 8 * 1024,
  preauthMaxCommand: 24 * 1024, // LOGIN with two literals of the limit
  preauthMaxBytes: 64 * 1024, // everything a connection sends before it is authenticated
});

const DEFAULTS = Object.freeze({
  ...DEFAULT_LIMITS,
  ...PREAUTH_LIMITS,
  maxConnectionsPerUser: 20,
  maxConnections: 2000,
  // Connections not authenticated yet, at once: the other slots stay for authenticated
  // sessions. At the limit the oldest of them gives way to the newcomer (Dovecot's login
  // processes do the same), so a flood from many addresses cannot keep users from logging in.
  maxPreauthConnections: 1000,
  // Not authenticated connections from one address (IPv6: one /64) at once; more are refused.
  // Well above what one mail client opens at once (20 simultaneous logins, issue 35) and what a
  // small office behind one NAT address does at 9:00; 50 such connections cost ~3 MB at most.
  maxConnectionsPerAddress: 50,
  // A total deadline for logging in: bytes do not extend it (a client trickling one byte every
  // 20 s kept a slot for ever when every byte restarted the 60 s timer).
  preauthTimeout: 60 * 1000,
  idleTimeout: 30 * 60 * 1000, // RFC 3501 5.4 autologout >= 30 min; RFC 2177 IDLE: 29 min
  idlePollMs: 2000,
  // Untagged updates (other sessions' changes) wait while more than this is written to a
  // client and not read by it; a client that reads nothing for outputStallTimeout is
  // disconnected. Memory per non-reading session stays about this bound.
  maxUnsentBytes: 256 * 1024,
  outputStallTimeout: 60 * 1000,
  // A relayed session (proxy.js) with no byte either way for this long is closed, so that an
  // upstream that vanished without a FIN frees its slots. Longer than IDLE's 29-minute
  // re-issue (RFC 2177) and the upstream's own >= 30-minute autologout (RFC 3501 5.4).
  relayIdleTimeout: 31 * 60 * 1000,
});

class ImapServer {
  /**
   * @param {object} opts
   * @param {object} opts.service a @mailgate/service MailService (openBackend, users)
   * @param {(user: string, password: string) => Promise<boolean>} [opts.verifyPassword]
   *   defaults to the service's user check
   * @param {LoginLimiter} [opts.limiter] the process's failed-login limiter (shared with HTTP
   *   by `mailgate serve`); a new one when omitted
   * @param {import('pino').Logger} [opts.logger]
   * @param {Partial<typeof DEFAULTS>} [opts.limits]
   * @param {{key: Buffer|string, cert: Buffer|string}|null} [opts.tls] enables STARTTLS
   * @param {string} [opts.backendKind] 'pg' unless a test says otherwise
   * @param {boolean} [opts.trustLoopback] plaintext LOGIN on loopback (default true)
   * @param {(user: string) => void} [opts.onProxiedLogin] called after each login relayed to
   *   the upstream server (`mailgate migrate --on-login` starts its background migration there)
   * @param {{maxBytes: number, userBytes?: number, maxEntryBytes?: number}} [opts.bodyCache]
   *   the bounds of the cache of message bytes (body-cache.js); default
   *   MAILGATE_IMAP_BODY_CACHE_MB
   * @param {{maxBytes: number, userBytes?: number}} [opts.listViewCache] the bounds of the
   *   cache of packed list-view reads (list-view-cache.js); default
   *   MAILGATE_IMAP_LIST_VIEW_CACHE_MB
   * @param {boolean} [opts.warmUp] run the warm-up (warm-up.js) before the first listen;
   *   default MAILGATE_IMAP_WARM_UP
   */
  constructor(opts) {
    this.service = opts.service;
    this.log = opts.logger || silentLogger();
    this.limits = { ...DEFAULTS, ...(opts.limits || {}) };
    this.verify = opts.verifyPassword || defaultVerify(opts.service);
    const users = opts.service && opts.service.users;
    this.limiter =
      opts.limiter ||
      new LoginLimiter({
        // Counts every process on the database shares (issue 34.4).
        shared: users && users.loginFailures,
        onSharedError: (err) => this.log.warn({ err: err.message }, 'imap: shared login counts'),
      });
    this.backendKind = opts.backendKind || 'pg';
    // Loopback counts as private (plaintext LOGIN allowed) unless told otherwise (tests of
    // what a networked client sees).
    this.trustLoopback = opts.trustLoopback !== false;
    this.tlsOptions = opts.tls || null;
    this.tlsContext = opts.tls ? tls.createSecureContext(opts.tls) : null;
    this.sessions = new Set();
    // The warm-up before the first listen (warm-up.js): MAILGATE_IMAP_WARM_UP, or opts.warmUp.
    this.warmUpOn = opts.warmUp ?? loadConfig().imapWarmUp === 1;
    this.warmed = null;
    // Sessions not authenticated yet, oldest first (Set order), and their count per address.
    this.preauth = new Set();
    this.preauthPerAddress = new Map();
    this.perUser = new Map();
    this.nextId = 1;
    this.servers = [];
    this.closing = false;
    const service = this.service;
    this.watcher = new MailboxWatcher({
      intervalMs: this.limits.idlePollMs,
      log: this.log,
      // Push from the store's LISTEN/NOTIFY when the service has it (the in-memory test
      // service does not: polling only).
      changes:
        service && typeof service.onMailboxChange === 'function'
          ? (fn) => service.onMailboxChange(fn)
          : null,
    });
    // Relayed sessions (proxy.js) and the timer that closes them once their user's route is
    // `store` again (cutover); it runs only while there are relayed sessions.
    this.proxySessions = new Set();
    this.onProxiedLogin = opts.onProxiedLogin || null;
    this.routeTimer = null;
    this.routeCheck = null;
    this.credentialTimer = null;
    this.credentialCheck = null;
    // Message bytes for repeated FETCHes, shared by this server's sessions (body-cache.js).
    this.bodyCache = new BodyCache(
      opts.bodyCache || { maxBytes: loadConfig().imapBodyCacheMb * 1024 * 1024 },
    );
    // Packed list-view reads, shared by this server's sessions (list-view-cache.js).
    this.listViewCache = new ListViewCache(
      opts.listViewCache || { maxBytes: loadConfig().imapListViewCacheMb * 1024 * 1024 },
    );
  }

  /**
   * The user's route: `proxy` relays the session upstream (migration), `store` serves it.
   * A service without routes (tests' in-memory one) serves everyone from the store.
   * @param {string} user
   * @returns {Promise<'store'|'proxy'>}
   */
  async routeOf(user) {
    const users = this.service && this.service.users;
    if (!users || typeof users.route !== 'function') return 'store';
    return users.route(user);
  }

  /** Starts the route check of relayed sessions (proxy.js), unless it runs already. */
  watchRoutes() {
    if (this.routeTimer) return;
    this.routeTimer = setInterval(() => {
      if (!this.proxySessions.size) {
        clearInterval(this.routeTimer);
        this.routeTimer = null;
        return;
      }
      // One check at a time: a database slower than the poll would otherwise stack one more
      // route query (and pool connection) per tick.
      if (this.routeCheck) return;
      this.routeCheck = checkRoutes(this)
        .catch((err) => this.log.warn({ err: err.message }, 'imap proxy: route check failed'))
        .finally(() => {
          this.routeCheck = null;
        });
    }, this.limits.idlePollMs);
    this.routeTimer.unref();
  }

  /**
   * Starts listening.
   * @param {{port?: number, host?: string, implicitTls?: boolean}} [o]
   * @returns {Promise<{port: number, host: string}>}
   */
  async listen(o = {}) {
    const implicit = Boolean(o.implicitTls);
    if (implicit && !this.tlsContext) throw new Error('implicit TLS needs a certificate');
    // Once, before the first listener: the first client meets compiled code (warm-up.js).
    if (this.warmUpOn) {
      if (!this.warmed) this.warmed = warmUp(this);
      await this.warmed;
    }
    const srv = implicit
      ? tls.createServer({ ...this.tlsOptions }, (s) => this.accept(s, true))
      : net.createServer((s) => this.accept(s, false));
    await new Promise((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(o.port ?? 1143, o.host || '127.0.0.1', () => {
        srv.off('error', reject);
        resolve();
      });
    });
    // Logged from here on only: a failed listen (EADDRINUSE) is the caller's coded error
    // (PORT_IN_USE), not also a raw log line before it.
    srv.on('error', (err) => this.log.error({ err: err.message }, 'imap listener error'));
    this.servers.push(srv);
    const a = srv.address();
    return { port: a.port, host: a.address };
  }

  accept(socket, secure) {
    if (this.closing) {
      refuse(socket, 'Too many connections');
      return;
    }
    const address = addressKey(socket.remoteAddress);
    if ((this.preauthPerAddress.get(address) || 0) >= this.limits.maxConnectionsPerAddress) {
      this.log.info({ address }, 'imap: too many connections from one address');
      refuse(socket, 'Too many connections from your address');
      return;
    }
    const full =
      this.sessions.size >= this.limits.maxConnections ||
      this.preauth.size >= this.limits.maxPreauthConnections;
    if (full) {
      // The oldest connection that has not logged in gives way; authenticated sessions never do.
      const oldest = this.preauth.values().next().value;
      if (!oldest) {
        refuse(socket, 'Too many connections');
        return;
      }
      oldest.bye('Connection queue full');
    }
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 60000);
    const s = new Session(this, socket, { secure, id: this.nextId++ });
    s.address = address;
    this.sessions.add(s);
    this.preauth.add(s);
    this.preauthPerAddress.set(address, (this.preauthPerAddress.get(address) || 0) + 1);
    s.greet();
  }

  /** The session is authenticated (or closed): it no longer counts as pre-login. */
  leftPreauth(s) {
    if (!this.preauth.delete(s)) return;
    const n = (this.preauthPerAddress.get(s.address) || 1) - 1;
    if (n <= 0) this.preauthPerAddress.delete(s.address);
    else this.preauthPerAddress.set(s.address, n);
  }

  /** CAPABILITY for a session in its current state (RFC 3501 7.2.1). */
  capabilities(s) {
    const caps = ['IMAP4rev1', 'LITERAL+', 'SASL-IR', 'ID', 'ENABLE', 'IDLE', 'NAMESPACE'];
    if (s.state === 'notauth') {
      if (this.tlsContext && !s.secure) caps.push('STARTTLS');
      if (s.privacyOk) caps.push('AUTH=PLAIN');
      else caps.push('LOGINDISABLED');
    } else {
      caps.push(
        'UIDPLUS',
        'MOVE',
        'UNSELECT',
        'CHILDREN',
        'SPECIAL-USE',
        'CONDSTORE',
        'QRESYNC',
        `APPENDLIMIT=${this.limits.maxLiteral}`,
      );
    }
    return caps;
  }

  /**
   * Checks a user's password through the failed-login limiter of @mailgate/core (the same
   * rules and, under `mailgate serve`, the same counters as the HTTP API): the attempt is
   * counted before the password is verified.
   * @returns {Promise<{verdict: 'ok'|'bad'|'blocked'|'nopassword', stamp?: string|null, text?: string}>}
   */
  async checkLogin(user, password, address) {
    const a = await this.limiter.admit(user, address);
    if (!a.allowed) return { verdict: 'blocked' };
    if (a.delayMs) await new Promise((r) => setTimeout(r, a.delayMs));
    let login = null;
    try {
      login = await this.verify(user, password);
    } catch (err) {
      // NO_PASSWORD: a user an import made; a failed attempt, answered with the step to take.
      if (err && err.code === 'NO_PASSWORD') {
        await a.failed();
        return { verdict: 'nopassword', text: err.message };
      }
      if (!err || (err.code !== 'USER_NOT_FOUND' && err.code !== 'INVALID_CREDENTIALS')) {
        a.cancel();
        throw err;
      }
    }
    // Settled (and written to the shared counts) before the client is answered.
    if (login) await a.succeeded();
    else await a.failed();
    if (!login) return { verdict: 'bad' };
    // The credential stamp of this login (service users.credentialStamps): a session whose
    // user's stamp changes (password changed, user deleted) is closed (watchCredentials).
    return { verdict: 'ok', stamp: typeof login === 'object' ? login.stamp || null : null };
  }

  /**
   * Starts the credential check of logged-in sessions, unless it runs already: every
   * IMAP_IDLE_POLL_MS one query for the stamps of the users with sessions; a session whose
   * user's stamp changed (`mailgate user passwd`, `user delete`) gets `* BYE` and is closed,
   * so a password change ends every session opened with the old one (issue 29.7). Runs only
   * while such sessions exist, and only on a service that has stamps.
   */
  watchCredentials() {
    const users = this.service && this.service.users;
    if (this.credentialTimer || !users || typeof users.credentialStamps !== 'function') return;
    this.credentialTimer = setInterval(() => {
      const live = [...this.sessions].filter((s) => !s.closed && s.credentialStamp);
      if (!live.length) {
        clearInterval(this.credentialTimer);
        this.credentialTimer = null;
        return;
      }
      // One check at a time: a check slower than the interval (a busy database, a busy
      // event loop) is not joined by another each tick, which piled statements up behind it.
      if (this.credentialCheck) return;
      this.credentialCheck = this.checkCredentials(live)
        .catch((err) => this.log.warn({ err: err.message }, 'imap: credential check failed'))
        .finally(() => {
          this.credentialCheck = null;
        });
    }, this.limits.idlePollMs);
    this.credentialTimer.unref();
  }

  /** One credential check of these sessions (watchCredentials). */
  async checkCredentials(sessions) {
    const stamps = await this.service.users.credentialStamps([
      ...new Set(sessions.map((s) => s.user)),
    ]);
    for (const s of sessions) {
      if (s.closed || stamps.get(s.user) === s.credentialStamp) continue;
      s.log.info({ user: s.user }, 'imap session closed: credentials changed');
      s.bye('Credentials changed; log in again');
    }
  }

  /** Reserves a connection slot for user; false when the per-user limit is reached. */
  claimUser(s, user) {
    const n = this.perUser.get(user) || 0;
    if (n >= this.limits.maxConnectionsPerUser) return false;
    this.perUser.set(user, n + 1);
    s.claimed = user;
    return true;
  }

  /** Gives back the session's connection slot (a failed login, or the session's end). */
  releaseUser(s) {
    if (!s.claimed) return;
    const n = (this.perUser.get(s.claimed) || 1) - 1;
    if (n <= 0) this.perUser.delete(s.claimed);
    else this.perUser.set(s.claimed, n);
    s.claimed = null;
  }

  sessionClosed(s) {
    this.sessions.delete(s);
    this.leftPreauth(s);
    this.proxySessions.delete(s);
    this.releaseUser(s);
  }

  /**
   * Graceful shutdown: stop accepting, `* BYE` every session (relayed sessions are closed
   * without one), wait for sockets to close.
   * @param {{timeoutMs?: number}} [o]
   */
  async close(o = {}) {
    this.closing = true;
    const closed = this.servers.map((srv) => new Promise((r) => srv.close(() => r())));
    for (const s of [...this.sessions]) {
      // A relayed session gets no `* BYE` from mailgate: its bytes are the upstream's, and a
      // line written in the middle of a relayed response (a literal) would corrupt it.
      if (this.proxySessions.has(s)) closeRelayed(s, 'shutdown');
      else s.bye('mailgate shutting down');
    }
    const deadline = Date.now() + (o.timeoutMs ?? 5000);
    while (this.sessions.size && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    for (const s of [...this.sessions]) s.socket.destroy();
    this.watcher.close();
    clearInterval(this.routeTimer);
    this.routeTimer = null;
    clearInterval(this.credentialTimer);
    this.credentialTimer = null;
    // A check in flight ends before the caller closes the service under it (it is bounded
    // by the probe's timeout).
    await this.credentialCheck;
    await this.routeCheck;
    await Promise.all(closed);
  }
}

/**
 * Says BYE to a connection that gets no session. It must not outlive the refusal (a client
 * that neither reads nor closes would keep its descriptor) nor crash the process with an
 * unhandled 'error' (a client that resets the connection at once).
 * @param {import('node:net').Socket} socket
 * @param {string} text
 */
function refuse(socket, text) {
  socket.on('error', () => {});
  socket.end(`* BYE ${text}\r\n`);
  setTimeout(() => socket.destroy(), 1000).unref();
}

/**
 * What the per-address limit counts by: the IPv4 address, or the /64 of an IPv6 address (one
 * host usually holds a whole /64, so counting single IPv6 addresses would be no limit).
 * @param {string|undefined} a socket.remoteAddress
 * @returns {string}
 */
function addressKey(a = '') {
  a = String(a || '').replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a);
  if (mapped) return mapped[1];
  if (!a.includes(':')) return a;
  const [head, tail] = a.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups =
    tail === undefined ? h : [...h, ...Array(Math.max(0, 8 - h.length - t.length)).fill('0'), ...t];
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g || '0', 16).toString(16))
    .join(':')}::/64`;
}

function defaultVerify(service) {
  return async (user, password) => {
    if (service && service.users && typeof service.users.verifyLogin === 'function') {
      // INVALID_CREDENTIALS for unknown users and wrong passwords alike, NO_PASSWORD for a
      // user without one (checkLogin); the login ({id, name, stamp}) when it is right.
      return service.users.verifyLogin(user, password);
    }
    throw new Error('no password check configured for the IMAP server');
  };
}

function silentLogger() {
  const log = { info() {}, warn() {}, debug() {}, error() {}, child: () => log };
  return log;
}

/**
 * @param {ConstructorParameters<typeof ImapServer>[0]} opts
 * @returns {ImapServer}
 */
function createImapServer(opts) {
  return new ImapServer(opts);
}

module.exports = { ImapServer, createImapServer, DEFAULTS, addressKey };
