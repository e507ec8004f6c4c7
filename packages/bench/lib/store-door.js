'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { loadConfig } = require('@mailgate/core');
const { createMailService, addLegacyUser } = require('@mailgate/service');
const { messageKey, KeyMap } = require('./keys');

/*
 * The store door: pg, es, mbox and maildir timed through the one mail interface
 * (@mailgate/service openBackend), exactly as the API, the CLI and the IMAP server reach them.
 * One adapter for the four kinds; what differs is how the mailbox gets into the backend
 * (`load`: import into PostgreSQL, plus shipping the ES outbox for es; a copy of the built
 * mbox / hard links of the built Maildir for the file kinds) and how the pristine mailbox is
 * put back after an expunge sample (`restore`). Adapter shape: see backends.js.
 *
 *   first_open  listMailboxes()              headers  scan(INBOX)
 *   headers_list  scanList(INBOX) — the list view (uid, flags, dates, sender, subject, size,
 *               attachments: a client's message list), not answered by es
 *   search      search(q, {mailbox, limit: 0})
 *   expunge     expunge(INBOX, uids, {force}) — pg: one row update per message (webmail
 *               "delete now"); mbox/maildir: the client's flag + expunge, as before
 *   fetch_one   getMessage(INBOX, uid, {parts: ['raw']}) — header row and bytes
 *
 * The service runs with its purge off: expunged pg rows stay hidden, and restore() brings
 * them back with restoreExpunged (same uids). PostgreSQL is the embedded server in
 * `<work>/pg-home` unless DATABASE_URL is set; every load uses a new user.
 */

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

/** Hard link (the Maildir files are never written in place), or a copy across devices. */
function linkOrCopy(from, to) {
  try {
    fs.linkSync(from, to);
  } catch (err) {
    if (err.code !== 'EXDEV' && err.code !== 'EPERM') throw err;
    fs.copyFileSync(from, to);
  }
}

/**
 * @param {'pg'|'es'|'mbox'|'maildir'} kind
 * @param {{work: string, size: string, log: (s: string) => void, config?: object}} ctx
 * @param {{esPrefix?: string, name?: string}} [opts] name: the backend's name in the results
 *   (default: the kind; pg-citus is kind pg on another database)
 */
function storeDoor(kind, ctx, opts = {}) {
  const base = ctx.config || loadConfig();
  const inDb = kind === 'pg' || kind === 'es';
  const esUrl = kind === 'es' ? base.elasticsearchUrl || process.env.ELASTICSEARCH_URL : null;
  const esPrefix = opts.esPrefix || `mgbench-${ctx.size}-${Date.now().toString(36)}`;
  // The embedded PostgreSQL and legacy.json of the bench live in the scratch dir.
  const home = path.join(ctx.work, 'pg-home');
  const config = {
    ...base,
    home,
    elasticsearchUrl: esUrl,
    logLevel: 'warn',
  };
  const env = { ...process.env, MAILGATE_HOME: home, MAILGATE_ES_PREFIX: esPrefix };
  const outbox = kind === 'es' || Boolean(base.elasticsearchUrl || process.env.ELASTICSEARCH_URL);
  let service = null;
  let be = null;
  let user = null;
  let box = null;
  let dir = null;
  let hidden = [];
  const keys = new KeyMap();

  const open = async () => {
    // es_outbox rows for es, and for pg when ES is configured (as in production).
    service = await createMailService({ config, env, purge: false, outbox });
  };

  // The file kinds: a fresh copy of the pristine mailbox in a directory of our own; returns
  // the seconds it took.
  const place = () => {
    const t0 = process.hrtime.bigint();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    dir = fs.mkdtempSync(path.join(ctx.work, `legacy-${kind}-${ctx.size}-`));
    if (kind === 'mbox') {
      fs.copyFileSync(box.mbox, path.join(dir, 'inbox.mbox'));
      addLegacyUser({ home }, user, { mboxDir: dir });
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
      addLegacyUser({ home }, user, { maildir: root });
    }
    return Number(process.hrtime.bigint() - t0) / 1e9;
  };

  // uid → key for the whole mailbox (untimed).
  const mapKeys = async () => {
    keys.clear();
    for await (const r of be.scanRaw('INBOX')) keys.add(r.uid, messageKey(r.raw));
  };

  const loadDb = async () => {
    const rep = await service.transfer.importMail({
      kind: 'mbox',
      paths: [box.mbox],
      user,
      mailbox: 'INBOX',
      workers: config.importWorkers,
      batchSize: config.batchSize,
      progress: false,
    });
    let seconds = rep.seconds;
    if (kind === 'es') {
      const s = await service.syncMirror();
      if (s.pending) throw new Error(`es sync left ${s.pending} outbox rows`);
      seconds += s.seconds;
    }
    return { seconds, messages: rep.imported };
  };

  return {
    name: opts.name || kind,
    wordSearch: inDb,
    listView: kind !== 'es',
    ...(kind === 'es' ? { requests: ES_REQUESTS } : {}),
    /** What the api adapter builds its app on: the same database, a token of this user. */
    handles: () => ({
      knex: service.store.knex,
      createToken: (o) => service.users.createToken(user, o),
    }),
    async load(b) {
      box = b;
      fs.mkdirSync(ctx.work, { recursive: true });
      if (!service) await open();
      // Sizes get their own user; the suffix keeps re-runs in one scratch home apart.
      user = `bench-${kind}-${ctx.size}-${Date.now().toString(36)}`;
      let loaded;
      if (inDb) {
        loaded = await loadDb();
        be = await service.openBackend(kind, user);
      } else {
        const seconds = place();
        be = await service.openBackend(kind, user);
        // Counted by the backend from its copy, untimed.
        let messages = 0;
        for await (const r of be.scanRaw('INBOX')) if (r.uid) messages++;
        loaded = { seconds, messages };
      }
      if (inDb) await mapKeys();
      return loaded;
    },
    async firstOpen() {
      if (kind === 'es') return { count: 0 }; // not applicable (requests), never called
      const inbox = (await be.listMailboxes()).find((m) => m.name === 'INBOX');
      return { count: inbox ? inbox.total : 0 };
    },
    async ready() {
      // The import's autovacuum done now (untimed), not beside the timed requests.
      if (inDb) await service.vacuumUser(user);
      if (!inDb) await mapKeys();
    },
    async headers(variant = 'headers') {
      const rows =
        variant === 'headers_list' ? await be.scanList('INBOX') : (await be.scan('INBOX', {})).rows;
      return { ids: rows.map((r) => r.uid) };
    },
    async search(query) {
      const r = await be.search(query, { mailbox: 'INBOX', limit: 0 });
      return { ids: r.mailboxes.flatMap((m) => m.uids) };
    },
    async expunge(list) {
      const r = await be.expunge('INBOX', keys.uidsOf(list), { force: true });
      hidden = r.expunged;
      // File kinds: positions before the expunge; the key map describes them until restore().
      return { ids: r.expunged };
    },
    async restore() {
      if (inDb) {
        if (hidden.length) await be.restoreExpunged('INBOX', hidden);
      } else {
        place();
        // The new copy is another directory: the backend is opened on it again.
        be = await service.openBackend(kind, user);
        await mapKeys();
      }
      hidden = [];
    },
    /** The api adapter's restore: un-hides what its expunges hid (its app does not purge). */
    async unhide(uids) {
      await be.restoreExpunged('INBOX', uids);
    },
    async fetchOne(key) {
      const [uid] = keys.uidsOf([key]);
      const m = uid ? await be.getMessage('INBOX', uid, { parts: ['raw'] }) : null;
      return { ids: m ? [m.row.uid] : [] };
    },
    keysOf(ids) {
      return keys.keysOf(ids);
    },
    uidsOf(list) {
      return keys.uidsOf(list);
    },
    async restart() {
      if (!inDb)
        return {
          note: 'no server (direct file access): cold = page cache dropped only',
          how: 'no server (direct file access); page cache dropped',
        };
      // An on-demand embedded server stops when its last client releases it.
      await service.close();
      await open();
      be = await service.openBackend(kind, user);
      const notes = [];
      if (config.databaseUrl)
        notes.push('DATABASE_URL: server not restarted (not ours), connections reopened');
      if (kind === 'es') notes.push('Elasticsearch node not restarted (shared)');
      // The store door is the in-process interface: its process stays, its database does not.
      const how =
        (config.databaseUrl
          ? 'in-process service reopened; DATABASE_URL server not restarted'
          : 'in-process service reopened; embedded PostgreSQL stopped (last client) and started') +
        (kind === 'es' ? '; Elasticsearch not restarted' : '');
      return { how, ...(notes.length ? { note: notes.join('; ') } : {}) };
    },
    async close() {
      if (service && kind === 'es' && service.mirror)
        await service.dropMirrorIndexes().catch(() => {});
      if (service) await service.close();
      service = null;
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
      dir = null;
    },
  };
}

module.exports = { storeDoor, ES_REQUESTS };
