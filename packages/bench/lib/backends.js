'use strict';

const { loadConfig } = require('@mailgate/core');
const { storeDoor, ES_REQUESTS } = require('./store-door');
const { imapDoorBackend } = require('./imap-door');
const { dovecotServer } = require('./dovecot-server');
const { mailgateImapServer } = require('./mailgate-imap-server');

/*
 * One uniform adapter per backend, so the runner times the same request the same way on each.
 *
 *   name                       backend id (`pg`, `dovecot-maildir` …)
 *   wordSearch                 true when bare words are word search (pg, es): word_* requests run
 *   requests                   optional Set: the only requests this backend answers (es); the
 *                              runner reports every other one as not applicable
 *   load(box) → {seconds, messages}   puts the built mailbox into the backend (the `import` request)
 *   firstOpen() → {count}      first open of the never-opened mailbox (IMAP SELECT; pg: mailbox list)
 *   ready()                    optional, untimed, after firstOpen: e.g. read the uid → key map
 *   headers(variant) → {ids}   every header row; variant 'headers_list': the list view
 *   listView                   true when the adapter answers headers('headers_list')
 *   search(query) → {ids}      a query in the mailgate query language (@mailgate/query)
 *   expunge(keys) → {ids}      flags the given messages deleted and expunges them (the client's answer)
 *   restore()                  puts the pristine mailbox back (untimed, before each expunge sample)
 *   fetchOne(key) → {ids}      flags, structure, header and first body part of one message
 *   keysOf(ids) → string[]     comparison keys (keys.js) of native ids — untimed, after the request
 *   restart() → {note?, how?, reconnect?}  restarts the backend's server (cold runs); `how`
 *                              says how (results.json `cold.how` of every cold row); the caller
 *                              drops caches, then calls reconnect({open}) if given (imap door:
 *                              log in, and SELECT unless open is false, as before the cold
 *                              first_open)
 *   close()
 *
 * Timed methods return native ids (uids) and the runner converts them with keysOf() after the
 * clock stops, so key computation is never part of a backend's time.
 *
 * The store door (pg, es, mbox, maildir) goes through @mailgate/service openBackend, one
 * adapter for all four (store-door.js); the imap door times IMAP servers with the raw client
 * (imap-door.js); the api door wraps the store door behind the HTTP API (apiBackend below).
 * Plugging in a backend: a factory `(ctx) => adapter` with the shape above in FACTORIES. ctx is
 * {work, size, log, config}. The harness, agreement check and reports need no change.
 */

/** Backends whose adapters are not written yet, with what they wait for. */
const PENDING = {};

class BackendUnavailable extends Error {
  constructor(name, why) {
    super(`backend ${name} is not available yet: ${why}`);
    this.code = 'BACKEND_UNAVAILABLE';
  }
}

/**
 * The same store reached through the webmail HTTP API (`--via api`): a Fastify instance from
 * @mailgate/api build() on a loopback port, a bearer token, and Node's fetch with keep-alive.
 * Timed requests include routing, schema validation, JSON (de)serialisation and the socket;
 * loading, key maps and restores go through the wrapped store adapter, untimed.
 *   headers   GET /mailboxes/INBOX/messages with Accept: application/x-ndjson, every line
 *             parsed as a client would
 *   search    GET /search?q=…&mailbox=INBOX&limit=0 (`backend=es` for es-api)
 *   expunge   POST …/flags {uids, add: [\Deleted]} then POST …/expunge {uids}, as a webmail
 *             client does; the app runs with its background purge off (as the pg and
 *             mailgate-imap adapters do: phase one of expunge is the client's answer), so the
 *             expunged rows stay hidden and restore un-hides them with their uids
 *   fetchOne  GET /mailboxes/INBOX/messages/:uid (flags, structure, header, body parts)
 * @param {'pg'|'es'} inner
 */
function apiBackend(inner) {
  return (ctx) => {
    const base = ctx.config || loadConfig();
    const esPrefix = inner === 'es' ? `mgbench-${ctx.size}-${Date.now().toString(36)}` : null;
    const wrapped = inner === 'es' ? esBackend(ctx, { esPrefix }) : storeDoor('pg', ctx);
    let app = null;
    let url = null;
    let auth = null;
    let builtFor = null;
    let hidden = [];

    const start = async () => {
      const { build } = require('@mailgate/api');
      const h = wrapped.handles();
      app = await build({
        knex: h.knex,
        docs: false,
        // Not the start-up sweep for other users' hidden rows (the pg adapter's, in the same
        // database): it would purge them while this adapter's requests are being timed.
        purgeOnStart: false,
        // Nor the purge of what the timed expunges hide: it is off the client's clock, and the
        // restore un-hides the rows instead of re-importing them (same uids, no key map).
        purge: false,
        ...(inner === 'es'
          ? {
              elasticsearchUrl: base.elasticsearchUrl || process.env.ELASTICSEARCH_URL,
              esEnv: { MAILGATE_ES_PREFIX: esPrefix },
              esWorker: false,
            }
          : {}),
      });
      url = (await app.listen({ host: '127.0.0.1', port: 0 })) + '/api/v1';
      const { token } = await h.createToken({ label: 'bench' });
      auth = { authorization: `Bearer ${token}` };
      builtFor = h.knex;
    };
    const stop = async () => {
      if (app) await app.close();
      app = null;
    };
    const call = async (method, p, body, accept = 'application/json') => {
      // A restart (cold runs) reopens the pool: the app must use the new one.
      if (!app || builtFor !== wrapped.handles().knex) {
        await stop();
        await start();
      }
      const res = await fetch(url + p, {
        method,
        headers: {
          ...auth,
          accept,
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        body: body ? JSON.stringify(body) : undefined,
      });
      if (!res.ok) throw new Error(`${method} ${p}: HTTP ${res.status} ${await res.text()}`);
      return res;
    };
    const json = async (method, p, body) => (await call(method, p, body)).json();

    return {
      ...wrapped,
      name: `${inner}-api`,
      // The API has no list-view route: only the full rows are timed through it.
      listView: false,
      async load(b) {
        const loaded = await wrapped.load(b);
        await stop();
        await start(); // untimed: the server is up before the first request
        return loaded;
      },
      async restart() {
        const r = await wrapped.restart();
        await stop();
        await start();
        // In-process: the app is built again on the restarted database, not a new process.
        return { ...r, how: `${r.how}; API app rebuilt in the bench process` };
      },
      async firstOpen() {
        const r = await json('GET', '/mailboxes');
        const inbox = r.mailboxes.find((m) => m.name === 'INBOX');
        return { count: inbox ? inbox.total : 0 };
      },
      async headers() {
        const res = await call(
          'GET',
          '/mailboxes/INBOX/messages?order=uid',
          null,
          'application/x-ndjson',
        );
        const ids = [];
        let rest = '';
        const decoder = new TextDecoder();
        for await (const chunk of res.body) {
          const lines = (rest + decoder.decode(chunk, { stream: true })).split('\n');
          rest = lines.pop();
          for (const line of lines) if (line) ids.push(JSON.parse(line).uid);
        }
        if (rest) ids.push(JSON.parse(rest).uid);
        return { ids };
      },
      async search(query) {
        const qs = new URLSearchParams({ q: query, mailbox: 'INBOX', limit: '0' });
        if (inner === 'es') qs.set('backend', 'es');
        const r = await json('GET', `/search?${qs}`);
        return { ids: r.mailboxes.flatMap((m) => m.uids) };
      },
      async expunge(list) {
        const uids = wrapped.uidsOf(list);
        await json('POST', '/mailboxes/INBOX/flags', { uids, add: ['\\Deleted'] });
        const r = await json('POST', '/mailboxes/INBOX/expunge', { uids });
        hidden = r.expunged;
        return { ids: r.expunged };
      },
      async restore() {
        if (hidden.length) await wrapped.unhide(hidden);
        hidden = [];
      },
      async fetchOne(key) {
        const [uid] = wrapped.uidsOf([key]);
        const m = await json('GET', `/mailboxes/INBOX/messages/${uid}`);
        return { ids: [m.uid] };
      },
      async close() {
        await stop();
        await wrapped.close();
      },
    };
  };
}

/** es needs ELASTICSEARCH_URL: refused at creation, before any work. */
function esBackend(ctx, opts = {}) {
  const base = ctx.config || loadConfig();
  if (!(base.elasticsearchUrl || process.env.ELASTICSEARCH_URL)) {
    throw new BackendUnavailable('es', 'ELASTICSEARCH_URL is not set');
  }
  return storeDoor('es', ctx, opts);
}

/**
 * pg-citus: the store door on a Citus coordinator (MAILGATE_BENCH_CITUS_URL), the same
 * requests as pg in the same run, so the two are compared on one machine at one time (issue
 * 34.7, docs/scaling-out.md). Its database is migrated (distributed) by the service on
 * connecting; the outbox is off as for pg without ELASTICSEARCH_URL.
 */
function citusBackend(ctx) {
  const url = process.env.MAILGATE_BENCH_CITUS_URL;
  if (!url) {
    throw new BackendUnavailable(
      'pg-citus',
      'MAILGATE_BENCH_CITUS_URL is not set (a database of a Citus cluster: scripts/citus/README.md)',
    );
  }
  const base = ctx.config || loadConfig();
  return storeDoor('pg', { ...ctx, config: { ...base, databaseUrl: url } }, { name: 'pg-citus' });
}

const FACTORIES = {
  pg: (ctx) => storeDoor('pg', ctx),
  es: esBackend,
  mbox: (ctx) => storeDoor('mbox', ctx),
  maildir: (ctx) => storeDoor('maildir', ctx),
  // The imap door: every IMAP server timed by the same raw client (imap-door.js).
  'dovecot-mbox': (ctx) => imapDoorBackend(dovecotServer('mbox'), ctx),
  'dovecot-maildir': (ctx) => imapDoorBackend(dovecotServer('maildir'), ctx),
  'dovecot-maildir-fts': (ctx) => imapDoorBackend(dovecotServer('maildir', { fts: true }), ctx),
  'mailgate-imap': (ctx) => imapDoorBackend(mailgateImapServer(ctx), ctx),
  'pg-api': apiBackend('pg'),
  'es-api': apiBackend('es'),
  'pg-citus': citusBackend,
};

/** Every backend name the bench knows, ready or not. */
const { ALL_BACKENDS } = require('./index-constants');

/** Flat-file backends: the baseline of the ratio columns. */
const FLAT_FILE = ['mbox', 'maildir', 'dovecot-mbox', 'dovecot-maildir'];

/**
 * Creates a backend adapter.
 * @param {string} name
 * @param {{work: string, size: string, log: (s: string) => void, config?: object}} ctx
 * @returns {object} adapter (see the top of this file)
 * @throws {BackendUnavailable} for a backend whose adapter is still pending
 */
function createBackend(name, ctx) {
  if (PENDING[name]) throw new BackendUnavailable(name, PENDING[name]);
  const f = FACTORIES[name];
  if (!f) throw new Error(`unknown backend ${name} (known: ${ALL_BACKENDS.join(', ')})`);
  return f(ctx);
}

module.exports = {
  createBackend,
  BackendUnavailable,
  PENDING,
  FACTORIES,
  ALL_BACKENDS,
  FLAT_FILE,
  ES_REQUESTS,
};
