'use strict';

const fs = require('node:fs');
const os = require('node:os');
const PgBoss = require('pg-boss');
const { errors, isCoded, loadConfig } = require('@mailgate/core');
const importer = require('@mailgate/importer');
const legacy = require('@mailgate/legacy');
const { parseRelayTarget, relayTargetText } = require('./relay');
const { createPacer } = require('./pace');

/*
 * Migrating a whole server (issue 33): the service operations behind `mailgate migrate
 * --accounts FILE | --all | --worker | --status | --report` and the API's migration view.
 * Owns the fleet's job queue (pg-boss, in the same PostgreSQL: schema `pgboss`, created by
 * pg-boss's own installer at the first use) and the rules of a run: one job per account, at
 * most `perHost` accounts of one upstream host at a time, a messages/s cap per upstream host,
 * back-off on upstream errors and failure after a bounded number. Never touches SQL (the
 * store's fleet-ops.js) nor a protocol (the CLI and the API are the edges). Never holds a
 * password longer than one account's run: the queue and the table keep only where it is
 * (`env:VAR` or `file:/path`).
 *
 * Why pg-boss: a plain Node API (send / fetch / complete / fail), jobs claimed with
 * SELECT … FOR UPDATE SKIP LOCKED, retries with exponential back-off, and jobs that expire
 * when their worker stops reporting (a killed worker's account is retried elsewhere); 10.x is
 * the line that runs on Node 20 (11+ needs Node 22). graphile-worker would do too, but its
 * worker API is built around task files and its 0.17+ needs Node 22.
 */

const QUEUE = 'mailgate-migrate-account';
const SCHEMA = 'pgboss';
// How often an idle worker asks for a job, and how soon a job that found its upstream host
// full (perHost accounts running) is offered again.
const POLL_MS = 1000;
const HOST_FULL_SECONDS = 2;
const TRANSIENT_NET =
  /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH|NoConnection|ETIMEOUT|ESOCKET|EConnectionClosed)$/;

/**
 * Parses an accounts file: JSON lines (`{"user","host","port","login","passwordEnv"|
 * "passwordFile","security","folders","relay"}`) or CSV with a header line (user, host, port,
 * login, password_env, password_file, security, folders, relay; folders separated by `;`).
 * Exactly one password source per account; never a password. `relay`: the old server's
 * delivery (`lmtp://host:port`), where the user's mail goes until their cutover.
 * @param {string} text
 * @param {string} name the file's name, for messages
 * @returns {Array<{user: string, host: string, port: number, login: string,
 *   passwordSource: string, security: string, folders: string[]|null, relay: string|null}>}
 *   ACCOUNTS_INVALID
 */
function parseAccounts(text, name) {
  const lines = String(text).split(/\r?\n/);
  const rows = [];
  const first = lines.findIndex((l) => l.trim() && !l.trim().startsWith('#'));
  if (first < 0) throw new errors.ACCOUNTS_INVALID(name, 'no accounts');
  const json = lines[first].trim().startsWith('{');
  let header = null;
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const where = `line ${i + 1}`;
    let o;
    if (json) {
      try {
        o = JSON.parse(line);
      } catch {
        throw new errors.ACCOUNTS_INVALID(name, `${where}: not a JSON object`);
      }
    } else if (!header) {
      header = line.split(',').map((h) => h.trim().toLowerCase().replace(/-/g, '_'));
      if (!header.includes('user') || !header.includes('host')) {
        throw new errors.ACCOUNTS_INVALID(name, `${where}: the CSV header must name user and host`);
      }
      return;
    } else {
      const cells = line.split(',').map((c) => c.trim());
      o = {};
      header.forEach((h, k) => {
        if (cells[k]) o[h] = cells[k];
      });
    }
    rows.push(accountOf(o, name, where));
  });
  const seen = new Set();
  for (const r of rows) {
    if (seen.has(r.user)) throw new errors.ACCOUNTS_INVALID(name, `user ${r.user} twice`);
    seen.add(r.user);
  }
  return rows;
}

/** One validated account of an accounts file. */
function accountOf(o, name, where) {
  const bad = (why) => new errors.ACCOUNTS_INVALID(name, `${where}: ${why}`);
  if (!o || typeof o !== 'object' || Array.isArray(o)) throw bad('not an object');
  const get = (...keys) => {
    for (const k of keys) if (o[k] != null && o[k] !== '') return String(o[k]);
    return null;
  };
  if ('password' in o)
    throw bad('a password never goes in the file: use passwordEnv or passwordFile');
  const user = get('user');
  if (!user || !/^[A-Za-z0-9._@+-]{1,128}$/.test(user))
    throw bad('user missing or not a plain name');
  const host = get('host');
  if (!host || /[\s/]/.test(host)) throw bad('host missing or not a host name');
  const port = Number(get('port') || 143);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw bad('port must be 1..65535');
  const env = get('passwordEnv', 'password_env');
  const file = get('passwordFile', 'password_file');
  if (Boolean(env) === Boolean(file)) throw bad('give exactly one of password_env, password_file');
  if (env && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(env))
    throw bad('password_env is not a variable name');
  const security = get('security') || 'starttls';
  if (!['tls', 'starttls', 'plaintext'].includes(security)) {
    throw bad('security must be tls, starttls or plaintext');
  }
  const relayText = get('relay');
  let relay = null;
  if (relayText) {
    try {
      relay = relayTargetText(parseRelayTarget(relayText));
    } catch {
      throw bad('relay must be lmtp://host:port or smtp://host:port');
    }
  }
  let folders = o.folders;
  if (typeof folders === 'string') folders = folders.split(';');
  if (folders != null && !Array.isArray(folders)) throw bad('folders must be a list');
  folders = folders ? folders.map((f) => String(f).trim()).filter(Boolean) : null;
  return {
    user,
    host,
    port,
    login: get('login') || user,
    passwordSource: env ? `env:${env}` : `file:${file}`,
    security,
    folders: folders && folders.length ? folders : null,
    relay,
  };
}

/**
 * Reads an account's password where its source says (this worker's environment or a file).
 * USAGE when it is not there: nothing to retry on this worker.
 */
function passwordOf(source, env) {
  if (source.startsWith('env:')) {
    const v = env[source.slice(4)];
    if (v == null) throw new errors.USAGE(`environment variable ${source.slice(4)} is not set`);
    return v;
  }
  const file = source.slice(5);
  try {
    return fs.readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  } catch (err) {
    throw new errors.USAGE(`password file ${file}: ${err.code || 'unreadable'}`);
  }
}

/**
 * What went wrong with an account's run, for the table and the report: a coded error keeps
 * its code and message (written for users); an upstream's refusal or a dropped connection is
 * UPSTREAM_IMAP_FAILED; anything else INTERNAL without its text (the worker logs it).
 * `permanent`: retrying cannot help (login refused, TLS not offered, password not readable).
 */
function failureOf(err, acct) {
  const where = `${acct.host}:${acct.port}`;
  if (isCoded(err)) {
    const permanent =
      err.code === 'UPSTREAM_TLS_REQUIRED' ||
      err.code === 'USAGE' ||
      (err.code === 'UPSTREAM_IMAP_FAILED' && /login failed/.test(err.message));
    return { code: err.code, message: err.message, permanent };
  }
  const code = err && (err.serverResponseCode || err.code);
  if (code === 'UNAVAILABLE' || (err && /\bUNAVAILABLE\b/.test(String(err.responseText || '')))) {
    return {
      code: 'UPSTREAM_IMAP_FAILED',
      message: `Upstream IMAP server ${where}: NO [UNAVAILABLE]`,
      permanent: false,
    };
  }
  if (code && TRANSIENT_NET.test(String(code))) {
    return {
      code: 'UPSTREAM_IMAP_FAILED',
      message: `Upstream IMAP server ${where}: ${code}`,
      permanent: false,
    };
  }
  if (err && /timed? ?out|connection (closed|lost)|socket/i.test(String(err.message))) {
    return {
      code: 'UPSTREAM_IMAP_FAILED',
      message: `Upstream IMAP server ${where}: connection lost`,
      permanent: false,
    };
  }
  return { code: 'INTERNAL', message: 'internal error (see the worker log)', permanent: false };
}

const sleep = (ms, signal) =>
  new Promise((resolve) => {
    if (signal && signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      if (signal) signal.removeEventListener('abort', done);
      resolve();
    }
    if (signal) signal.addEventListener('abort', done, { once: true });
  });

/**
 * The fleet operations of a mail service (`service.fleet`).
 * @param {import('./index').MailService} service
 */
function createFleet(service) {
  const { store, config } = service;
  // A configuration made by hand (tests) may lack the section: the defaults then.
  const limits = config.migrate || loadConfig({}).migrate;
  const log = service.logger.child({ component: 'fleet' });
  let boss = null;

  // The queue's defaults for every job: retries beyond the account's own bound (expired jobs
  // of killed workers use retries too; the table's `attempts` decides when an account fails).
  const jobOptions = () => ({
    retryLimit: limits.retries + 20,
    retryDelay: limits.backoffSeconds,
    retryBackoff: true,
    expireInSeconds: limits.expireSeconds,
  });

  /** pg-boss on this store's pool, its schema installed or upgraded, the queue made. */
  async function queue(opts = {}) {
    if (boss) return boss;
    const b = new PgBoss({
      db: store.queueDb(),
      schema: SCHEMA,
      migrate: true,
      schedule: false,
      supervise: Boolean(opts.supervise),
      // Expired jobs (a killed worker's) are found at this interval.
      maintenanceIntervalSeconds: Math.max(1, Math.min(60, Math.floor(limits.expireSeconds / 2))),
    });
    b.on('error', (err) => log.warn({ err: err.message }, 'job queue'));
    await b.start();
    if (!(await b.getQueue(QUEUE))) {
      try {
        await b.createQueue(QUEUE, { policy: 'standard', ...jobOptions() });
      } catch (err) {
        // Two processes creating it at once: the other one won.
        if (!(await b.getQueue(QUEUE))) throw err;
      }
    }
    boss = b;
    return b;
  }

  async function enqueue(userId, startAfter) {
    const b = await queue();
    await b.send(QUEUE, { userId }, { ...jobOptions(), ...(startAfter ? { startAfter } : {}) });
  }

  /** Registers accounts, routes each to proxy, enqueues one job per account not cut over. */
  async function register(accounts) {
    const out = [];
    for (const a of accounts) {
      const r = await store.registerMigrationAccount(a);
      // This machine's IMAP proxy relays the user's sessions meanwhile (legacy.json holds the
      // upstream and where its password is, never the password).
      const src = a.passwordSource;
      legacy.addLegacyUser(config.home, a.user, {
        imap: {
          host: a.host,
          port: a.port,
          login: a.login,
          security: a.security,
          ...(src.startsWith('env:')
            ? { passwordEnv: src.slice(4) }
            : { passwordFile: src.slice(5) }),
        },
        // Mail for the user is relayed there until the cutover (delivery.js).
        ...(a.relay ? { relay: a.relay } : {}),
      });
      if (r.queued) await enqueue(r.userId);
      out.push({ user: a.user, state: r.state, queued: r.queued });
    }
    return {
      registered: out.length,
      queued: out.filter((x) => x.queued).length,
      alreadyCutOver: out.filter((x) => !x.queued).length,
      accounts: out,
    };
  }

  /** One account's run, once its job is claimed. */
  async function runAccount(job, worker, signal) {
    const { userId } = job.data;
    const b = await queue();
    const locks = await store.holdMigrationLocks();
    let slotHeld = false;
    try {
      // One run per account: a job retried while an older run of it still goes (its job
      // expired but the worker lives) waits for that run to end.
      while (!(await locks.tryAccount(userId))) {
        if (signal.aborted) return b.fail(QUEUE, job.id, { interrupted: true });
        await sleep(POLL_MS, signal);
      }
      const acct = await store.migrationAccount(userId);
      if (!acct || acct.state === 'cutover' || acct.state === 'failed') {
        return b.complete(QUEUE, job.id, { skipped: acct ? acct.state : 'deleted' });
      }
      if ((await locks.tryHostSlot(acct.host, acct.port, limits.perHost)) == null) {
        // The upstream host has its share: offered again shortly (sent before this one is
        // completed, so a crash in between leaves two jobs, never none; the second finds the
        // account done).
        await enqueue(userId, HOST_FULL_SECONDS);
        return b.complete(QUEUE, job.id, { hostFull: true });
      }
      slotHeld = true;
      const have = await store.userMailTotals(userId);
      await store.updateMigrationAccount(userId, {
        state: 'running',
        worker,
        started_at: new Date(),
        finished_at: null,
        messages: have.messages,
        bytes: have.bytes,
        run_base_messages: have.messages,
      });
      await migrateOne(acct, have, signal, job, b);
    } finally {
      await locks.release();
      if (slotHeld) log.debug({ user: userId }, 'host slot released');
    }
  }

  async function migrateOne(acct, have, signal, job, b) {
    const t0 = Date.now();
    try {
      const imap = {
        host: acct.host,
        port: acct.port,
        login: acct.login,
        password: passwordOf(acct.passwordSource, service.env),
        security: acct.security,
        folders: acct.folders,
      };
      const total = await surveyUpstream(imap);
      await store.updateMigrationAccount(acct.userId, { upstream_messages: total });
      const pace = pacer(acct, signal);
      const r = await importer.migrateAccount({
        store,
        user: acct.user,
        imap,
        // Cut over here, after the table says verified (the state an operator sees between).
        cutover: false,
        // Deliveries stay held until the route switch below (delivery hold, migrate.js).
        keepHold: true,
        workers: config.importWorkers,
        batchSize: pace.batchSize,
        progress: false,
        signal,
        onBatch: async ({ messages, bytes }) => {
          await store.addMigrationProgress(acct.userId, messages, bytes);
          await pace.after(messages);
        },
        log,
      });
      if (r.interrupted) {
        // This worker is stopping: the account goes back to the queue as it is (resumable).
        await store.updateMigrationAccount(acct.userId, { state: 'queued', worker: null });
        return b.fail(QUEUE, job.id, { interrupted: true });
      }
      const sum = (k, side) => r.verify.mailboxes.reduce((n, m) => n + m[side][k], 0);
      const figures = {
        messages: sum('messages', 'local'),
        bytes: sum('bytes', 'local'),
        upstream_messages: sum('messages', 'upstream'),
        upstream_bytes: sum('bytes', 'upstream'),
        finished_at: new Date(),
      };
      if (r.verify.ok) {
        await store.updateMigrationAccount(acct.userId, { ...figures, state: 'verified' });
        await store.setRoute(acct.user, 'store');
        await store.updateMigrationAccount(acct.userId, {
          state: 'cutover',
          attempts: 0,
          error_code: null,
          error_message: null,
        });
        log.info({ user: acct.user, messages: figures.messages, ms: Date.now() - t0 }, 'cut over');
        return b.complete(QUEUE, job.id, { cutover: true });
      }
      const bad = r.verify.mailboxes.filter((m) => !m.ok);
      const e = new errors.VERIFY_FAILED(
        bad.map((m) => `${m.folder}: ${m.missing} missing, ${m.differing} differ`).join('; '),
      );
      await store.updateMigrationAccount(acct.userId, figures);
      throw e;
    } catch (err) {
      return failed(acct, err, job, b);
    }
  }

  /** An error of one run: back to the queue with back-off, or failed after the bound. */
  async function failed(acct, err, job, b) {
    const f = failureOf(err, acct);
    if (f.code === 'INTERNAL')
      log.error({ user: acct.user, err: err && err.message }, 'migration run failed');
    const attempts = acct.attempts + 1;
    const final = f.permanent || attempts >= limits.retries;
    const message =
      final && !f.permanent ? new errors.MIGRATION_GAVE_UP(attempts, f.message).message : f.message;
    await store.updateMigrationAccount(acct.userId, {
      state: final ? 'failed' : 'queued',
      attempts,
      error_code: f.code,
      error_message: message,
      worker: null,
      finished_at: final ? new Date() : null,
    });
    log.warn({ user: acct.user, code: f.code, attempts, final }, 'migration run failed');
    // A run that stopped inside its last pass (the store failed under it) leaves no hold.
    await store.releaseDeliveries(acct.user).catch(() => {});
    // A failed account keeps its route (`proxy`): its user keeps working on the old server.
    if (final) return b.complete(QUEUE, job.id, { failed: f.code });
    return b.fail(QUEUE, job.id, { code: f.code });
  }

  /**
   * The messages/s cap of the account's upstream host (pace.js), shared by the accounts of
   * that host running now on any worker.
   */
  function pacer(acct, signal) {
    return createPacer({
      rate: limits.rate,
      perHost: limits.perHost,
      batchSize: config.batchSize,
      running: () => store.runningMigrationsOnHost(acct.host, acct.port),
      sleep: (ms) => sleep(ms, signal),
    });
  }

  /** Messages upstream in the folders to move (STATUS per folder): the run's ETA. */
  async function surveyUpstream(imap) {
    const client = await legacy.connect(imap);
    try {
      let n = 0;
      for (const box of await client.list()) {
        if (box.flags.has('\\Noselect') || !importer.wantedFolder(imap.folders, box.path)) continue;
        const s = await client.status(box.path, { messages: true });
        n += Number(s.messages) || 0;
      }
      return n;
    } finally {
      await client.logout().catch(() => client.close());
    }
  }

  return {
    parseAccounts,

    /**
     * Registers the accounts of an accounts file (parseAccounts), routes each to `proxy`
     * and enqueues one migration job per account not already cut over.
     * @param {ReturnType<typeof parseAccounts>} accounts
     */
    register,

    /**
     * Registers every user routed to `proxy` whose upstream IMAP account is configured
     * (`mailgate legacy add-user U --imap-host …`), as `--accounts` would.
     */
    async registerAll() {
      const users = (await service.users.list()).filter((u) => u.route === 'proxy');
      const accounts = [];
      for (const u of users) {
        let e;
        try {
          e = legacy.userEntry(config.home, u.name, 'imap').imap;
        } catch (err) {
          if (err.code === 'LEGACY_NOT_CONFIGURED') continue;
          throw err;
        }
        accounts.push({
          user: u.name,
          host: e.host,
          port: Number(e.port),
          login: e.login,
          passwordSource: e.passwordFile ? `file:${e.passwordFile}` : `env:${e.passwordEnv}`,
          security: e.security || (e.tls === true ? 'tls' : 'starttls'),
          folders: null,
        });
      }
      return register(accounts);
    },

    /**
     * Pulls jobs until `signal` aborts (or, with untilDone, until every account is cut over
     * or failed): `concurrency` accounts at a time in this process.
     * @param {{concurrency?: number, signal: AbortSignal, untilDone?: boolean, name?: string}} o
     * @returns {Promise<{accounts: number}>} runs this worker made
     */
    async work(o) {
      const b = await queue({ supervise: true });
      const worker = o.name || `${os.hostname()}:${process.pid}`;
      let runs = 0;
      const finished = async () => {
        const { accounts } = await store.migrationAccounts();
        return accounts.every((a) => a.state === 'cutover' || a.state === 'failed');
      };
      const loop = async () => {
        while (!o.signal.aborted) {
          const [job] = await b.fetch(QUEUE, { batchSize: 1 });
          if (!job) {
            if (o.untilDone && (await finished())) return;
            await sleep(POLL_MS, o.signal);
            continue;
          }
          runs++;
          try {
            await runAccount(job, worker, o.signal);
          } catch (err) {
            // The store or the queue failed under this run (PostgreSQL restarting): the job
            // stays claimed and expires to another worker; this loop goes on.
            log.error({ err: err && err.message, code: err && err.code }, 'migration job');
            await sleep(POLL_MS, o.signal);
          }
        }
      };
      await Promise.all(Array.from({ length: o.concurrency || 1 }, loop));
      return { worker, runs };
    },

    /**
     * The fleet's figures now: accounts per state, messages and bytes done, rate and ETA for
     * the fleet and each running account.
     */
    async status() {
      const { now, accounts } = await store.migrationAccounts();
      return statusOf(new Date(now), accounts);
    },

    /**
     * Every account with its counts and state, and every failure with its reason.
     */
    async report() {
      const { now, accounts } = await store.migrationAccounts();
      const st = statusOf(new Date(now), accounts);
      return {
        fleet: st.fleet,
        accounts: accounts.map((a) => ({
          user: a.user,
          state: a.state,
          route: a.route,
          upstream: `${a.host}:${a.port}`,
          messages: a.messages,
          bytes: a.bytes,
          upstreamMessages: a.upstreamMessages,
          upstreamBytes: a.upstreamBytes,
          attempts: a.attempts,
          seconds: a.startedAt && a.finishedAt ? secondsBetween(a.startedAt, a.finishedAt) : null,
          error: a.error,
        })),
        failures: accounts
          .filter((a) => a.state === 'failed')
          .map((a) => ({
            user: a.user,
            upstream: `${a.host}:${a.port}`,
            attempts: a.attempts,
            ...a.error,
          })),
      };
    },

    /** Stops the queue client (not the jobs: they stay in PostgreSQL). */
    async close() {
      if (boss) await boss.stop({ graceful: false, close: false, wait: true }).catch(() => {});
      boss = null;
    },
  };
}

const secondsBetween = (a, b) => Number(((new Date(b) - new Date(a)) / 1000).toFixed(3));

/** The status figures of a set of accounts at time `now` (exported for the tests). */
function statusOf(now, accounts) {
  const states = { queued: 0, running: 0, verified: 0, cutover: 0, failed: 0 };
  let messages = 0;
  let bytes = 0;
  let first = null;
  let last = null;
  const known = [];
  for (const a of accounts) {
    states[a.state]++;
    messages += a.messages;
    bytes += a.bytes;
    if (a.startedAt && (!first || a.startedAt < first)) first = a.startedAt;
    if (a.finishedAt && (!last || a.finishedAt > last)) last = a.finishedAt;
    if (a.upstreamMessages != null) known.push(a.upstreamMessages);
  }
  const active = states.queued + states.running > 0;
  const end = active || !last ? now : new Date(last);
  const seconds = first ? Math.max(0.001, (end - new Date(first)) / 1000) : 0;
  // What this run moved (not what was there before it): for the rate.
  const moved = accounts.reduce((n, a) => n + Math.max(0, a.messages - a.runBaseMessages), 0);
  const rate = seconds ? moved / seconds : 0;
  const mean = known.length ? known.reduce((x, y) => x + y, 0) / known.length : null;
  let remaining = 0;
  for (const a of accounts) {
    if (a.state !== 'queued' && a.state !== 'running') continue;
    const total = a.upstreamMessages ?? mean;
    if (total == null) remaining = null;
    else if (remaining != null) remaining += Math.max(0, total - a.messages);
  }
  const running = accounts
    .filter((a) => a.state === 'running')
    .map((a) => {
      const s = a.startedAt ? Math.max(0.001, (now - new Date(a.startedAt)) / 1000) : 0;
      const r = s ? (a.messages - a.runBaseMessages) / s : 0;
      const left = a.upstreamMessages == null ? null : Math.max(0, a.upstreamMessages - a.messages);
      return {
        user: a.user,
        upstream: `${a.host}:${a.port}`,
        worker: a.worker,
        messages: a.messages,
        bytes: a.bytes,
        upstreamMessages: a.upstreamMessages,
        rate: round(r),
        etaSeconds: left == null || !(r > 0) ? null : Math.round(left / r),
      };
    });
  return {
    at: now.toISOString(),
    fleet: {
      accounts: accounts.length,
      ...states,
      messages,
      bytes,
      seconds: round(seconds),
      rate: round(rate),
      etaSeconds: !active
        ? 0
        : remaining == null || !(rate > 0)
          ? null
          : Math.round(remaining / rate),
    },
    running,
  };
}

const round = (x) => Math.round(x * 10) / 10;

module.exports = { createFleet, parseAccounts, statusOf, failureOf, QUEUE };
