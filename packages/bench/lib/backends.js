'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { openDatabase, loadConfig } = require('@mailgate/core');
const { PgStore } = require('@mailgate/store');
const { runImport } = require('@mailgate/importer');
const { MboxBackend, MaildirBackend } = require('@mailgate/legacy');
const { messageKey, KeyMap } = require('./keys');
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
 *   headers() → {ids}          every header row
 *   search(query) → {ids}      a query in the mailgate query language (@mailgate/query)
 *   expunge(keys) → {ids}      flags the given messages deleted and expunges them (the client's answer)
 *   restore()                  puts the pristine mailbox back (untimed, before each expunge sample)
 *   fetchOne(key) → {ids}      flags, structure, header and first body part of one message
 *   keysOf(ids) → string[]     comparison keys (keys.js) of native ids — untimed, after the request
 *   restart() → {note?}        restarts the backend's server (cold runs); the caller drops caches
 *   close()
 *
 * Timed methods return native ids (uids) and the runner converts them with keysOf() after the
 * clock stops, so key computation is never part of a backend's time.
 *
 * Plugging in a backend (es, mbox, maildir): write a factory `(ctx) => adapter` with the shape
 * above, put it in FACTORIES below, and remove its entry from PENDING. ctx is
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
 * The store path: PostgreSQL through PgStore methods only (no SQL here). Embedded PostgreSQL
 * in `<work>/pg-home` unless DATABASE_URL is set; each load uses a new user, so an import
 * is always measured into empty per-user tables.
 * @param {{work: string, size: string, log: (s: string) => void, config?: object}} ctx
 */
function pgBackend(ctx, opts = {}) {
  const base = ctx.config || loadConfig();
  const config = { ...base, home: base.databaseUrl ? base.home : path.join(ctx.work, 'pg-home') };
  let db = null;
  let store = null;
  let user = null;
  let mailboxId = null;
  let box = null;
  let hidden = [];
  const keys = new KeyMap();

  const open = async () => {
    db = await openDatabase(config);
    // es: outbox rows always; pg: the store's default (with ELASTICSEARCH_URL set, as in production).
    store = new PgStore(db.knex, opts.outbox === undefined ? {} : { outbox: opts.outbox });
    if (opts.onOpen) await opts.onOpen(db);
  };
  const importBox = () =>
    runImport({
      store,
      kind: 'mbox',
      paths: [box.mbox],
      user: user.name,
      mailbox: 'INBOX',
      workers: config.importWorkers,
      batchSize: config.batchSize,
      progress: false,
    });
  // uid → key for the whole mailbox, read through the store's source stream.
  const mapKeys = async () => {
    keys.clear();
    for await (const row of store.streamSources(user.id, mailboxId)) {
      keys.add(Number(row.uid), messageKey(row.raw));
    }
  };

  return {
    name: 'pg',
    wordSearch: true,
    /** @returns {{userId: number, mailboxId: number}} (for the es adapter) */
    target: () => ({ userId: user.id, mailboxId }),
    /** @returns {{knex: object, store: object, user: object, mailboxId: number}} (api adapter) */
    handles: () => ({ knex: db.knex, store, user, mailboxId }),
    /**
     * Restore after an expunge that was purged (the API purges in the background): the
     * idempotent re-import puts exactly the purged messages back, with new uids.
     */
    async reimport() {
      await store.purgeExpunged(user.id, mailboxId);
      await importBox();
      await mapKeys();
    },
    async load(b) {
      box = b;
      if (!db) await open();
      // Sizes get their own user; the suffix keeps re-runs in one scratch home apart.
      user = await store.ensureUser(`bench-${ctx.size}-${Date.now().toString(36)}`);
      const rep = await importBox();
      mailboxId = (await store.getMailbox(user.id, 'INBOX')).id;
      await mapKeys();
      return { seconds: rep.seconds, messages: rep.imported };
    },
    async firstOpen() {
      const boxes = await store.listMailboxes(user.id);
      const inbox = boxes.find((m) => m.name === 'INBOX');
      return { count: inbox ? inbox.total : 0 };
    },
    async headers() {
      const rows = await store.scanHeaders(user.id, mailboxId);
      return { ids: rows.map((r) => r.uid) };
    },
    async search(query) {
      const r = await store.search(user.id, query, { mailboxId });
      return { ids: r.hits.map((h) => h.uid) };
    },
    async expunge(list) {
      // The store's "delete these now" (one row version per message); the IMAP-shaped
      // STORE +FLAGS \Deleted then EXPUNGE is timed by the dovecot adapters, and by pg
      // through the API (`--via api`, which flags first as a webmail client would).
      const uids = keys.uidsOf(list);
      const r = await store.expunge(user.id, mailboxId, { uids, force: true });
      hidden = r.expunged;
      return { ids: r.expunged };
    },
    async restore() {
      // Phase one of expunge only hides rows (the purge is a background job, not part of
      // the client's answer): un-hiding them restores the mailbox with the same uids.
      if (hidden.length) await store.restoreExpunged(user.id, mailboxId, hidden);
      hidden = [];
    },
    async fetchOne(key) {
      const [uid] = keys.uidsOf([key]);
      const m = await store.getMessage(user.id, mailboxId, uid);
      return { ids: m ? [m.header.uid] : [] };
    },
    keysOf(ids) {
      return keys.keysOf(ids);
    },
    uidsOf(list) {
      return keys.uidsOf(list);
    },
    async restart() {
      if (config.databaseUrl) {
        await db.close();
        await open();
        return { note: 'DATABASE_URL: server not restarted (not ours), connections reopened' };
      }
      // An on-demand embedded server stops when its last client releases it.
      await db.close();
      await open();
      return {};
    },
    async close() {
      if (db) await db.close();
      db = null;
    },
  };
}

/**
 * The direct file backends of @mailgate/legacy (as UW-IMAP and Courier served mail): no
 * server and no index, every request is a scan of the files through the backend's methods
 * (listMailboxes, scanHeaders, search, setFlags + expunge, getMessage). `import` = copy the
 * built mbox file / hard-link the built Maildir's files into a scratch directory of our own
 * (the backend rewrites and unlinks only there); `first_open` = listMailboxes() (a scan: these
 * backends have nothing else). UIDs are positions (see packages/legacy/README.md), so the
 * uid → key map is read again after every restore. No word search: the direct backends test
 * each message with compilePredicate, whose bare words are not pg/es word search.
 * @param {'mbox'|'maildir'} format
 */
function fileBackend(format) {
  return (ctx) => {
    let dir = null;
    let backend = null;
    let box = null;
    const keys = new KeyMap();

    // A fresh copy of the pristine mailbox; returns the seconds it took.
    const place = () => {
      const t0 = process.hrtime.bigint();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
      dir = fs.mkdtempSync(path.join(ctx.work, `legacy-${format}-${ctx.size}-`));
      if (format === 'mbox') {
        fs.copyFileSync(box.mbox, path.join(dir, 'inbox.mbox'));
        backend = new MboxBackend(dir);
      } else {
        const root = path.join(dir, 'Maildir');
        for (const sub of ['cur', 'new', 'tmp'])
          fs.mkdirSync(path.join(root, sub), { recursive: true });
        for (const sub of ['cur', 'new']) {
          const from = path.join(box.maildir, sub);
          if (!fs.existsSync(from)) continue;
          for (const f of fs.readdirSync(from))
            linkOrCopy(path.join(from, f), path.join(root, sub, f));
        }
        backend = new MaildirBackend(root);
      }
      return Number(process.hrtime.bigint() - t0) / 1e9;
    };
    const mapKeys = async () => {
      keys.clear();
      for await (const e of backend.entries('INBOX')) {
        if (e.uid) keys.add(e.uid, messageKey(e.raw));
      }
    };

    return {
      name: format,
      wordSearch: false,
      async load(b) {
        box = b;
        fs.mkdirSync(ctx.work, { recursive: true });
        const seconds = place();
        // Counted by the backend from its copy, untimed (a read of what was just written,
        // so the page cache is as warm as Dovecot's after its copy).
        let messages = 0;
        for await (const e of backend.entries('INBOX')) if (e.uid) messages++;
        return { seconds, messages };
      },
      async firstOpen() {
        const boxes = await backend.listMailboxes();
        const inbox = boxes.find((m) => m.name === 'INBOX');
        return { count: inbox ? inbox.total : 0 };
      },
      async ready() {
        await mapKeys();
      },
      async headers() {
        const rows = await backend.scanHeaders('INBOX');
        return { ids: rows.map((r) => r.uid) };
      },
      async search(query) {
        const r = await backend.search(query, { mailbox: 'INBOX' });
        return { ids: r.hits.map((h) => h.uid) };
      },
      async expunge(list) {
        // The client's answer, as on the other backends: STORE +FLAGS \Deleted, then EXPUNGE
        // (on mbox each of the two is a crash-safe rewrite of the whole file).
        const uids = keys.uidsOf(list);
        await backend.setFlags('INBOX', { uids, add: ['\\Deleted'] });
        const r = await backend.expunge('INBOX', { uids });
        // Positions before the expunge: the key map still describes them until restore().
        return { ids: r.expunged };
      },
      async restore() {
        place();
        await mapKeys();
      },
      async fetchOne(key) {
        const [uid] = keys.uidsOf([key]);
        // getMessage parses the message (flags, structure, header row) and returns its bytes.
        const m = uid ? await backend.getMessage('INBOX', uid) : null;
        return { ids: m ? [m.header.uid] : [] };
      },
      keysOf(ids) {
        return keys.keysOf(ids);
      },
      async restart() {
        return { note: 'no server (direct file access): cold = page cache dropped only' };
      },
      async close() {
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
        dir = null;
        backend = null;
      },
    };
  };
}

/** Hard link (the Maildir files are never written in place), or a copy across devices. */
function linkOrCopy(from, to) {
  try {
    fs.linkSync(from, to);
  } catch (err) {
    if (err.code !== 'EXDEV' && err.code !== 'EPERM') throw err;
    fs.copyFileSync(from, to);
  }
}

/** The requests the Elasticsearch mirror answers: word search and the indexed header fields. */
const ES_REQUESTS = new Set([
  'import',
  'word_rare',
  'word_common',
  'word_happy',
  'word_free',
  'from',
  'date',
]);

/**
 * The Elasticsearch mirror (@mailgate/es) over the pg path: `import` = the pg import with
 * outbox rows (PgStore option `outbox`) plus `es sync` (syncAll: the outbox drained into the
 * user's index, refreshed), timed together; searches through searchEs (ES query, hits resolved
 * against PostgreSQL, pg uids). Only ES_REQUESTS run: substring `text:` is refused by the
 * mirror (no n-gram analyzer on a minimal node), headers, fetch and expunge are PostgreSQL's
 * own; the runner reports the rest as not applicable. Needs ELASTICSEARCH_URL; indexes are
 * named with a bench prefix and deleted on close.
 * @param {{work: string, size: string, log: (s: string) => void, config?: object}} ctx
 */
function esBackend(ctx, opts = {}) {
  const base = ctx.config || loadConfig();
  const url = base.elasticsearchUrl || process.env.ELASTICSEARCH_URL;
  if (!url) throw new BackendUnavailable('es', 'ELASTICSEARCH_URL is not set');
  const { openMirror, syncAll, searchEs } = require('@mailgate/es');
  const prefix = opts.prefix || `mgbench-${ctx.size}-${Date.now().toString(36)}`;
  let mirror = null;
  const pg = pgBackend(
    { ...ctx, config: base },
    {
      outbox: true,
      onOpen: async (db) => {
        if (mirror) await mirror.close();
        mirror = openMirror({ ...base, elasticsearchUrl: url }, db.knex, {
          env: { MAILGATE_ES_PREFIX: prefix },
        });
      },
    },
  );
  return {
    ...pg,
    name: 'es',
    wordSearch: true,
    requests: ES_REQUESTS,
    async load(b) {
      const loaded = await pg.load(b);
      const s = await syncAll({ ...mirror });
      if (s.pending) throw new Error(`es sync left ${s.pending} outbox rows`);
      return { seconds: loaded.seconds + s.seconds, messages: loaded.messages };
    },
    async firstOpen() {
      return { count: 0 }; // not applicable (requests), never called by the runner
    },
    async search(query) {
      const { userId, mailboxId } = pg.target();
      const r = await searchEs(mirror, userId, query, { mailboxId });
      return { ids: r.hits.map((h) => h.uid) };
    },
    async restart() {
      const r = await pg.restart();
      return {
        note: 'Elasticsearch node not restarted (shared), PostgreSQL as pg; ' + (r.note || ''),
      };
    },
    async close() {
      if (mirror) {
        // By name: ES 8 refuses wildcard deletes (action.destructive_requires_name).
        const names = await mirror.client.indices
          .get({ index: `${prefix}-*`, allow_no_indices: true, ignore_unavailable: true })
          .then((r) => Object.keys(r))
          .catch(() => []);
        if (names.length) await mirror.client.indices.delete({ index: names }).catch(() => {});
        await mirror.close();
      }
      mirror = null;
      await pg.close();
    },
  };
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
 *             client does; the API purges in the background, so restore re-imports
 *   fetchOne  GET /mailboxes/INBOX/messages/:uid (flags, structure, header, body parts)
 * @param {'pg'|'es'} inner
 */
function apiBackend(inner) {
  return (ctx) => {
    const base = ctx.config || loadConfig();
    const esPrefix = inner === 'es' ? `mgbench-${ctx.size}-${Date.now().toString(36)}` : null;
    const wrapped = inner === 'es' ? esBackend(ctx, { prefix: esPrefix }) : pgBackend(ctx);
    let app = null;
    let url = null;
    let auth = null;
    let builtFor = null;

    const start = async () => {
      const { build } = require('@mailgate/api');
      const h = wrapped.handles();
      app = await build({
        knex: h.knex,
        docs: false,
        // Not the start-up sweep for other users' hidden rows (the pg adapter's, in the same
        // database): it would purge them while this adapter's requests are being timed.
        purgeOnStart: false,
        ...(inner === 'es'
          ? {
              elasticsearchUrl: base.elasticsearchUrl || process.env.ELASTICSEARCH_URL,
              esEnv: { MAILGATE_ES_PREFIX: esPrefix },
              esWorker: false,
            }
          : {}),
      });
      url = (await app.listen({ host: '127.0.0.1', port: 0 })) + '/api/v1';
      const { token } = await h.store.createToken(h.user.id, { label: 'bench' });
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
        return r;
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
        return { ids: r.expunged };
      },
      async restore() {
        await wrapped.reimport();
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

const FACTORIES = {
  pg: (ctx) => pgBackend(ctx),
  es: esBackend,
  mbox: fileBackend('mbox'),
  maildir: fileBackend('maildir'),
  // The imap door: every IMAP server timed by the same raw client (imap-door.js).
  'dovecot-mbox': (ctx) => imapDoorBackend(dovecotServer('mbox'), ctx),
  'dovecot-maildir': (ctx) => imapDoorBackend(dovecotServer('maildir'), ctx),
  'mailgate-imap': (ctx) => imapDoorBackend(mailgateImapServer(ctx), ctx),
  'pg-api': apiBackend('pg'),
  'es-api': apiBackend('es'),
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
