'use strict';

/*
 * The migration proxy (issue 12 item 4), as Dovecot's proxy and nginx's mail proxy do it: a
 * user whose route is `proxy` is authenticated by mailgate (auth.js: the same scrypt password
 * and failed-login limiter as everyone), then mailgate logs in to the user's upstream account
 * (`mailgate legacy add-user`), answers the client's LOGIN/AUTHENTICATE with the upstream's
 * capabilities, and from then on relays both sockets byte for byte (IDLE, literals, everything:
 * nothing is parsed after the handoff). It owns the upstream socket of relayed sessions and the
 * route check that closes them at cutover (`mailgate migrate` flips the route to `store`: the
 * client reconnects and lands on the store). It never reads mail or the store.
 */

const net = require('node:net');
const tls = require('node:tls');
const { errors, upstreamSecurity } = require('@mailgate/core');
const { no } = require('./errors');

// One deadline for the whole upstream login (connect, greeting, STARTTLS, LOGIN, CAPABILITY):
// an upstream trickling lines cannot extend it.
const CONNECT_TIMEOUT_MS = 15000;
// When one side of a relay closes, the other is ended (its buffered final lines, e.g. BYE and
// the tagged LOGOUT answer, still go out) and destroyed after this grace.
const CLOSE_GRACE_MS = 5000;
// TCP keepalive on the upstream socket: a vanished upstream host is noticed by the kernel.
const KEEPALIVE_MS = 60000;
// Login-phase lines from upstream; anything longer is not an IMAP server we can relay to.
const MAX_LOGIN_LINE = 64 * 1024;

/**
 * Logs in upstream for a proxied user and arranges the handoff after the tagged OK the session
 * sends for this answer (Session.run calls `s.handoff`).
 * @param {import('./session').Session} s
 * @param {string} user
 * @returns {Promise<{code: string|null, text: string}|{answered: true}>}
 */
async function proxyLogin(s, user) {
  let acct;
  try {
    acct = await s.server.service.upstreamAccount(user);
  } catch (err) {
    s.log.warn({ user, code: err.code }, 'imap proxy: no upstream account');
    throw no('Account is being moved; try again later', 'UNAVAILABLE');
  }
  let up;
  try {
    up = await openUpstream(acct, { timeoutMs: CONNECT_TIMEOUT_MS });
  } catch (err) {
    // The reason goes to the log only (it may name the upstream host, never the password).
    s.log.warn(
      { user, upstream: `${acct.host}:${acct.port}`, code: err.code, err: err.message },
      'imap proxy',
    );
    throw no('Upstream server unavailable; try again later', 'UNAVAILABLE');
  }
  if (s.closed) {
    up.socket.destroy();
    return { answered: true };
  }
  s.user = user;
  s.state = 'proxy';
  s.proxied = up;
  s.handoff = () => relay(s, up);
  s.server.proxySessions.add(s);
  s.server.watchRoutes();
  s.log.info({ user, upstream: `${acct.host}:${acct.port}` }, 'imap login (proxied)');
  if (s.server.onProxiedLogin) {
    try {
      s.server.onProxiedLogin(user);
    } catch (err) {
      s.log.error({ user, err: err.message }, 'imap proxy: login hook failed');
    }
  }
  return { code: up.capability ? `CAPABILITY ${up.capability}` : null, text: 'Logged in' };
}

/**
 * Connects and logs in to an upstream IMAP server: greeting, TLS as the account says
 * (upstreamSecurity of @mailgate/core: implicit TLS, STARTTLS required — the default — or
 * plaintext by explicit choice), LOGIN, CAPABILITY when the tagged OK did not carry it.
 * UPSTREAM_TLS_REQUIRED when STARTTLS is required and the upstream does not offer or refuses it.
 * @param {{host: string, port: number, login: string, password: string, security?: string, tls?: boolean}} acct
 * @param {{timeoutMs?: number}} [o]
 * @returns {Promise<{socket: import('node:net').Socket, capability: string|null, rest: Buffer}>}
 *   rest: bytes upstream sent after the login exchange (relayed to the client first)
 */
async function openUpstream(acct, o = {}) {
  const deadline = Date.now() + (o.timeoutMs || CONNECT_TIMEOUT_MS);
  const timeoutMs = () => Math.max(1, deadline - Date.now());
  const security = upstreamSecurity(acct);
  let socket = await dial(acct, security === 'tls', timeoutMs());
  let reader = new LineReader(socket);
  try {
    const greeting = await reader.line(timeoutMs());
    if (!/^\* (OK|PREAUTH)\b/i.test(greeting)) throw new Error('unexpected greeting');
    if (security === 'starttls') {
      let caps = capabilityIn(greeting);
      if (!caps) caps = await command(reader, socket, 'mg0 CAPABILITY', timeoutMs);
      // No plaintext fallback: a STARTTLS stripped from the capabilities is what a downgrade
      // attack looks like, and the LOGIN that follows carries the password.
      const where = `${acct.host}:${acct.port}`;
      if (!/\bSTARTTLS\b/i.test(caps || '')) throw new errors.UPSTREAM_TLS_REQUIRED(where);
      await command(reader, socket, 'mg1 STARTTLS', timeoutMs).catch((err) => {
        throw err.refused ? new errors.UPSTREAM_TLS_REQUIRED(where) : err;
      });
      // Bytes after the tagged OK and before the handshake were not sent under TLS (RFC 3501
      // 6.2.1; the plaintext-injection attack of CVE-2011-0411): refuse them.
      if (reader.detach().length) throw new Error('upstream sent data after STARTTLS');
      socket = await upgrade(socket, acct, timeoutMs());
      reader = new LineReader(socket);
    }
    const login = `mg2 LOGIN ${quoted(acct.login)} ${quoted(acct.password)}`;
    // Capabilities from before STARTTLS are discarded (RFC 3501 6.2.1): asked again if needed.
    let capability = await command(reader, socket, login, timeoutMs, { secret: true });
    if (!capability) capability = await command(reader, socket, 'mg3 CAPABILITY', timeoutMs);
    const rest = reader.detach();
    return { socket, capability: capability || null, rest };
  } catch (err) {
    reader.detach();
    socket.destroy();
    throw err;
  }
}

/**
 * From the tagged OK on: both sockets piped (backpressure both ways). Commands the client
 * pipelined behind its LOGIN, already framed by the session, go upstream first, as the bytes
 * they were.
 * @param {import('./session').Session} s
 * @param {{socket: import('node:net').Socket, rest: Buffer}} up
 */
function relay(s, up) {
  const client = s.socket;
  client.off('data', s.onData);
  clearTimeout(s.idleTimer);
  const pending = pendingBytes(s);
  s.queue = [];
  up.socket.on('error', (err) => s.log.debug({ err: err.message }, 'imap proxy upstream error'));
  up.socket.setKeepAlive(true, KEEPALIVE_MS);
  // Any byte either way passes through the upstream socket (written or read).
  up.socket.setTimeout(s.server.limits.relayIdleTimeout, () => {
    s.log.info({ user: s.user }, 'imap proxy: relay idle too long, closing');
    up.socket.destroy();
  });
  up.socket.on('close', () => endSoon(client));
  client.on('close', () => endSoon(up.socket));
  if (up.rest.length) client.write(up.rest);
  if (pending.length) up.socket.write(pending);
  client.pipe(up.socket);
  up.socket.pipe(client);
}

/** Ends a relay side (what it has buffered is still sent), destroyed after a grace. */
function endSoon(socket) {
  if (socket.destroyed) return;
  socket.end();
  setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
}

/**
 * Closes a relayed session (cutover, shutdown): both sockets, no words (a response may be
 * mid-way).
 * @param {import('./session').Session} s
 * @param {string} why for the log
 */
function closeRelayed(s, why) {
  s.log.info({ user: s.user, why }, 'imap proxy: closing relayed session');
  if (s.proxied) s.proxied.socket.destroy();
  s.socket.destroy();
}

/**
 * Checks the route of every user with relayed sessions (one query) and closes the sessions of
 * users that are no longer routed to `proxy`.
 * @param {import('./server').ImapServer} server
 */
async function checkRoutes(server) {
  const sessions = [...server.proxySessions].filter((s) => !s.closed);
  if (!sessions.length) return;
  const users = [...new Set(sessions.map((s) => s.user))];
  const still = await server.service.users.proxied(users);
  for (const s of sessions) if (!still.has(s.user)) closeRelayed(s, 'route changed');
}

/** The bytes of commands the session framed but did not run, and of the one half-read. */
function pendingBytes(s) {
  const out = [];
  const put = (parts) => {
    for (const p of parts) out.push(typeof p === 'string' ? Buffer.from(`${p}\r\n`, 'latin1') : p);
  };
  for (const ev of s.queue) if (ev.type === 'command') put(ev.parts);
  const f = s.framer;
  put(f.parts);
  out.push(...f.literalChunks, f.buf);
  return Buffer.concat(out);
}

function dial(acct, implicitTls, timeoutMs) {
  return new Promise((resolve, reject) => {
    const opts = { host: acct.host, port: Number(acct.port), servername: acct.host };
    const sock = implicitTls ? tls.connect(opts) : net.connect(opts);
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error('connect timeout'));
    }, timeoutMs);
    sock.once(implicitTls ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      sock.off('error', fail);
      resolve(sock);
    });
    const fail = (err) => {
      clearTimeout(timer);
      reject(err);
    };
    sock.once('error', fail);
  });
}

function upgrade(socket, acct, timeoutMs) {
  return new Promise((resolve, reject) => {
    const sock = tls.connect({ socket, servername: acct.host });
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error('STARTTLS timeout'));
    }, timeoutMs);
    sock.once('secureConnect', () => {
      clearTimeout(timer);
      resolve(sock);
    });
    sock.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

/**
 * Sends one command and reads to its tagged answer.
 * @param {() => number} timeoutMs what is left of the login's deadline
 * @returns {Promise<string|null>} the capability list from `[CAPABILITY …]` or `* CAPABILITY`
 */
async function command(reader, socket, line, timeoutMs, o = {}) {
  const tag = line.slice(0, line.indexOf(' '));
  socket.write(`${line}\r\n`);
  let caps = null;
  for (;;) {
    const l = await reader.line(timeoutMs());
    if (/^\* CAPABILITY /i.test(l)) caps = l.slice('* CAPABILITY '.length).trim();
    if (!l.startsWith(`${tag} `)) continue;
    const status = l.slice(tag.length + 1, tag.length + 3).toUpperCase();
    if (status !== 'OK') {
      // Never echo a LOGIN line: it holds the password.
      const err = new Error(o.secret ? 'upstream login refused' : `upstream refused ${line}`);
      err.refused = true;
      throw err;
    }
    return capabilityIn(l) || caps;
  }
}

function capabilityIn(line) {
  const m = /\[CAPABILITY ([^\]]*)\]/i.exec(line);
  return m ? m[1].trim() : null;
}

/** An IMAP quoted string (RFC 3501 4.3); CR, LF and NUL cannot be sent in one. */
function quoted(v) {
  const s = String(v);
  if (/[\r\n\0]/.test(s)) throw new Error('credential not sendable as an IMAP string');
  return `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** Reads CRLF lines from a socket until detached; detach returns the unread bytes. */
class LineReader {
  constructor(socket) {
    this.socket = socket;
    this.buf = Buffer.alloc(0);
    this.waiter = null;
    this.error = null;
    this.onData = (chunk) => {
      this.buf = Buffer.concat([this.buf, chunk]);
      this.wake();
    };
    this.onEnd = () => {
      this.error = new Error('upstream closed the connection');
      this.wake();
    };
    socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('error', this.onEnd);
  }

  wake() {
    const w = this.waiter;
    this.waiter = null;
    if (w) w();
  }

  async line(timeoutMs) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const nl = this.buf.indexOf(10);
      if (nl >= 0) {
        const l = this.buf.toString('latin1', 0, nl).replace(/\r$/, '');
        this.buf = this.buf.subarray(nl + 1);
        return l;
      }
      if (this.buf.length > MAX_LOGIN_LINE) throw new Error('upstream line too long');
      if (this.error) throw this.error;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('upstream timeout');
      await new Promise((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
  }

  detach() {
    // Paused until relay() pipes it: no upstream byte is lost in between.
    this.socket.pause();
    this.socket.off('data', this.onData);
    this.socket.off('end', this.onEnd);
    this.socket.off('error', this.onEnd);
    const rest = this.buf;
    this.buf = Buffer.alloc(0);
    return rest;
  }
}

module.exports = { proxyLogin, openUpstream, checkRoutes, closeRelayed };
