/*
 * The page's only door to mailgate: fetch on the HTTP API (/api/v1), with the session token
 * and the chosen backend. Owns the token (sessionStorage: gone when the tab closes) and
 * reports every answer's Server-Timing to listeners; it never touches the DOM.
 */

const BASE = '/api/v1';
const TOKEN_KEY = 'mailgate.token';

/** An API error with its coded name (`{error:{code,message}}` from the server). */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Parses `Server-Timing: backend;dur=12.3, …` into {name: ms}. */
export function parseServerTiming(header) {
  const out = {};
  if (!header) return out;
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().split(';');
    const dur = params.map((p) => p.trim()).find((p) => p.startsWith('dur='));
    if (name && dur) out[name] = Number(dur.slice(4));
  }
  return out;
}

/**
 * A start-up request boot.js sent before the modules ran, taken once: the same method and
 * URL with the same token, else nothing.
 */
function adoptEarly(key, token) {
  const early = window.mailgateEarly;
  const e = early && early[key];
  if (!e) return null;
  delete early[key];
  return e.token === token ? e : null;
}

export class Api {
  constructor() {
    this.token = sessionStorage.getItem(TOKEN_KEY);
    this.backend = 'pg';
    this.listeners = new Set();
  }

  get signedIn() {
    return Boolean(this.token);
  }

  setToken(token) {
    this.token = token;
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
  }

  /**
   * fn({method, path, backend, answeredBy, status, serverMs, timing, totalMs}) after every
   * request; `backend` is the one asked for, `answeredBy` the Server-Timing metric's name.
   */
  onTiming(fn) {
    this.listeners.add(fn);
  }

  /**
   * One request. `backend` (default: the chosen one) is added as a query parameter to data
   * routes; `raw` returns the Response instead of parsed JSON.
   */
  async request(method, path, { query, body, backend, raw, signal } = {}) {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query || {})) {
      if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
    }
    const be = backend === undefined ? this.backend : backend;
    if (be && be !== 'pg') params.set('backend', be);
    const qs = params.toString();
    const headers = { accept: 'application/json' };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const url = `${BASE}${path}${qs ? `?${qs}` : ''}`;
    const early = body === undefined && !signal && adoptEarly(`${method} ${url}`, this.token);
    const t0 = early ? early.t0 : performance.now();
    const res = await (early
      ? early.response
      : fetch(url, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
          signal,
        }));
    const timing = parseServerTiming(res.headers.get('server-timing'));
    let payload = null;
    if (!raw && res.status !== 204) {
      const text = await res.text();
      payload = text ? JSON.parse(text) : null;
    }
    const totalMs = performance.now() - t0;
    const serverMs = Object.values(timing).reduce((a, b) => a + b, 0);
    // Who answered, as the server says it (the Server-Timing metric's name), not what was
    // asked for: a switch that silently fell back to pg would show here.
    const answeredBy = Object.keys(timing)[0] || null;
    for (const fn of this.listeners) {
      fn({
        method,
        path,
        backend: be || 'pg',
        answeredBy,
        status: res.status,
        serverMs,
        timing,
        totalMs,
      });
    }
    if (!res.ok) {
      if (raw) payload = await res.json().catch(() => null);
      const e = (payload && payload.error) || {
        code: `HTTP_${res.status}`,
        message: res.statusText,
      };
      if (res.status === 401 && !path.startsWith('/session')) this.setToken(null);
      throw new ApiError(res.status, e.code, e.message);
    }
    return raw ? res : payload;
  }

  async signIn(user, password) {
    const r = await this.request('POST', '/session', { body: { user, password }, backend: null });
    this.setToken(r.token);
    return r;
  }

  /** Trades a one-time sign-in link's token for a session token. */
  async redeemLink(link) {
    const r = await this.request('POST', '/session/link', { body: { link }, backend: null });
    this.setToken(r.token);
    return r;
  }

  async signOut() {
    try {
      await this.request('DELETE', '/session', { backend: null });
    } finally {
      this.setToken(null);
    }
  }

  mailboxes(backend) {
    return this.request('GET', '/mailboxes', { backend });
  }

  /** One keyset page of header rows. */
  messages(mailbox, { order, cursor, limit, backend, signal } = {}) {
    return this.request('GET', `/mailboxes/${encodeURIComponent(mailbox)}/messages`, {
      query: { order, cursor, limit },
      backend,
      signal,
    });
  }

  /** One message; `images: 'remote'` keeps remote image URLs in the HTML (blocked otherwise). */
  message(mailbox, uid, backend, { images } = {}) {
    return this.request('GET', `/mailboxes/${encodeURIComponent(mailbox)}/messages/${uid}`, {
      query: { images },
      backend,
    });
  }

  async raw(mailbox, uid, backend) {
    const res = await this.request(
      'GET',
      `/mailboxes/${encodeURIComponent(mailbox)}/messages/${uid}/raw`,
      { backend, raw: true },
    );
    return res.text();
  }

  async attachment(mailbox, uid, part, backend) {
    const res = await this.request(
      'GET',
      `/mailboxes/${encodeURIComponent(mailbox)}/messages/${uid}/attachments/${part}`,
      { backend, raw: true },
    );
    return res.blob();
  }

  search(q, { mailbox, order, cursor, limit, backend, signal } = {}) {
    return this.request('GET', '/search', {
      query: { q, mailbox, order, cursor, limit },
      backend,
      signal,
    });
  }

  setFlags(mailbox, uids, add = [], remove = [], backend) {
    return this.request('POST', `/mailboxes/${encodeURIComponent(mailbox)}/flags`, {
      body: { uids, add, remove },
      backend,
    });
  }

  expunge(mailbox, uids, backend) {
    return this.request('POST', `/mailboxes/${encodeURIComponent(mailbox)}/expunge`, {
      body: uids ? { uids } : null,
      backend,
    });
  }

  move(mailbox, uids, target, backend) {
    return this.request('POST', `/mailboxes/${encodeURIComponent(mailbox)}/move`, {
      body: { uids, target },
      backend,
    });
  }

  threads({ mailbox, cursor, limit, backend } = {}) {
    return this.request('GET', '/threads', { query: { mailbox, cursor, limit }, backend });
  }

  thread(id, backend) {
    return this.request('GET', `/threads/${encodeURIComponent(id)}`, { backend });
  }

  backends() {
    return this.request('GET', '/backends', { backend: null });
  }
}
