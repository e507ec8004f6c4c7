'use strict';

const path = require('node:path');
const crypto = require('node:crypto');
const { spawn, spawnSync } = require('node:child_process');
const Knex = require('knex');
const { MIGRATIONS_DIR, PgStore } = require('@mailgate/store');

const CLI = path.resolve(__dirname, '..', '..', 'cli', 'bin', 'mailgate.js');

/**
 * A fresh database for one test file, cloned from the migrated template.
 * @returns {Promise<{url: string, knex: import('knex').Knex, store: PgStore, drop: () => Promise<void>}>}
 */
async function createTestDatabase() {
  const adminUrl = process.env.MAILGATE_TEST_ADMIN_URL;
  if (!adminUrl) throw new Error('test database not set up: run tests through jest (globalSetup)');
  const name = `mgt_${process.env.JEST_WORKER_ID || 0}_${crypto.randomBytes(4).toString('hex')}`;
  if (process.env.MAILGATE_TEST_CITUS_BASE) return createCitusTestDatabase(name);
  const admin = Knex({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
  await admin.raw(`CREATE DATABASE ${name} TEMPLATE ${process.env.MAILGATE_TEST_TEMPLATE}`);
  const u = new URL(adminUrl);
  u.pathname = '/' + name;
  const url = u.toString();
  const knex = Knex({ client: 'pg', connection: url, migrations: { directory: MIGRATIONS_DIR } });
  return {
    url,
    knex,
    store: new PgStore(knex),
    async drop() {
      await knex.destroy();
      await admin.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.destroy();
    },
  };
}

/**
 * createTestDatabase on a Citus cluster: a copy, on every node, of the run's migrated and
 * distributed template (global-setup.js, citus.js createCitusTemplate).
 */
async function createCitusTestDatabase(name) {
  const { cloneCitusDatabase } = require('./citus');
  const cluster = await cloneCitusDatabase(
    name,
    process.env.MAILGATE_TEST_CITUS_TEMPLATE,
    process.env.MAILGATE_TEST_CITUS_BASE,
  );
  const knex = Knex({
    client: 'pg',
    connection: cluster.url,
    migrations: { directory: MIGRATIONS_DIR },
  });
  return {
    url: cluster.url,
    knex,
    store: new PgStore(knex),
    async drop() {
      await knex.destroy();
      await cluster.drop();
    },
  };
}

/**
 * Runs the CLI against a test database; resolves with {code, stdout, stderr, json}.
 * @param {string[]} args
 * @param {{url: string, env?: object, input?: string}} opts
 */
function runCli(args, opts) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    env: { ...process.env, DATABASE_URL: opts.url, LOG_LEVEL: 'error', ...(opts.env || {}) },
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    input: opts.input,
  });
  let json = null;
  if (args.includes('--json')) {
    try {
      json = JSON.parse(r.stdout.trim().split('\n').pop());
    } catch {
      json = null;
    }
  }
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr, json };
}

/** Starts the CLI without waiting (for kill tests). */
function spawnCli(args, opts) {
  return spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, DATABASE_URL: opts.url, LOG_LEVEL: 'error', ...(opts.env || {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/**
 * Resolves with the match once a spawned CLI's stderr matches re (a server's "listening on"
 * line); rejects if the process exits first, with what it wrote.
 * @param {import('node:child_process').ChildProcess} child
 * @param {RegExp} re
 * @returns {Promise<RegExpExecArray>}
 */
function stderrMatch(child, re) {
  let err = '';
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => {
      err += d;
      const m = re.exec(err);
      if (m) resolve(m);
    });
    child.once('exit', (c) => reject(new Error(`exited ${c}: ${err}`)));
  });
}

module.exports = { createTestDatabase, runCli, spawnCli, stderrMatch, CLI };

/**
 * Per-file fixture: a fresh database (`ctx.db`, set in beforeAll), dropped after the file.
 * @returns {{db: Awaited<ReturnType<typeof createTestDatabase>>|null}}
 */
function useTestDatabase() {
  const ctx = { db: null };
  beforeAll(async () => {
    ctx.db = await createTestDatabase();
  });
  afterAll(async () => {
    if (ctx.db) await ctx.db.drop();
  });
  return ctx;
}

/**
 * Per-file fixture: a fresh database and a scratch folder, both removed after the file;
 * `ctx.cli` runs the CLI on that database. `ctx.db` is set in beforeAll (hooks of the file run
 * after this one's: register an afterAll that must run before the drop before calling this).
 * @param {string} name scratch folder prefix
 * @returns {{db: Awaited<ReturnType<typeof createTestDatabase>>|null, tmp: string, cli: (args: string[], opts?: object) => ReturnType<typeof runCli>}}
 */
function useCliSuite(name) {
  const fs = require('node:fs');
  const os = require('node:os');
  const ctx = useTestDatabase();
  ctx.tmp = fs.mkdtempSync(path.join(os.tmpdir(), `mailgate-${name}-`));
  ctx.cli = (args, opts = {}) => runCli(args, { url: ctx.db.url, ...opts });
  afterAll(() => fs.rmSync(ctx.tmp, { recursive: true, force: true }));
  return ctx;
}

/**
 * useCliSuite plus the mail service on its database (`ctx.service`, set in beforeAll;
 * MAILGATE_HOME the scratch folder, logs silent), closed before the database is dropped.
 * @param {string} name scratch folder prefix
 */
function useServiceSuite(name) {
  const { createMailService } = require('@mailgate/service');
  let service = null;
  // Registered before useCliSuite's hooks: afterAll hooks run in order, so this closes first.
  afterAll(async () => {
    if (service) await service.close();
  });
  const ctx = useCliSuite(name);
  beforeAll(async () => {
    service = await createMailService({
      knex: ctx.db.knex,
      env: { MAILGATE_HOME: ctx.tmp, LOG_LEVEL: 'silent' },
    });
    ctx.service = service;
  });
  return ctx;
}

module.exports.useTestDatabase = useTestDatabase;
module.exports.useCliSuite = useCliSuite;
module.exports.useServiceSuite = useServiceSuite;

/**
 * A fresh database, a scratch MAILGATE_HOME and the mail service on them (logs silent): what a
 * protocol server under test (IMAP, LMTP) stands on. close() closes the service, drops the
 * database and removes the folder; the caller closes its server first.
 * @param {string} name scratch folder prefix (`mg-<name>-`)
 * @param {object} [env] more service environment
 * @returns {Promise<{db: Awaited<ReturnType<typeof createTestDatabase>>, home: string, service: object, close: () => Promise<void>}>}
 */
async function startTestService(name, env = {}) {
  const fs = require('node:fs');
  const os = require('node:os');
  const { createMailService } = require('@mailgate/service');
  const db = await createTestDatabase();
  const home = fs.mkdtempSync(path.join(os.tmpdir(), `mg-${name}-`));
  const service = await createMailService({
    knex: db.knex,
    env: { MAILGATE_HOME: home, LOG_LEVEL: 'silent', ...env },
  });
  return {
    db,
    home,
    service,
    async close() {
      await service.close();
      await db.drop();
      fs.rmSync(home, { recursive: true, force: true });
    },
  };
}

module.exports.startTestService = startTestService;

/**
 * The SQL statements a step sends through a Knex instance (its 'query' events), for tests that
 * bound how many statements a command costs; the listener is removed even when the step throws.
 * @template T
 * @param {import('knex').Knex} knex
 * @param {() => Promise<T>} step
 * @returns {Promise<{result: T, sql: string[]}>}
 */
async function statementsDuring(knex, step) {
  const sql = [];
  const onQuery = (q) => sql.push(q.sql);
  knex.on('query', onQuery);
  try {
    return { result: await step(), sql };
  } finally {
    knex.removeListener('query', onQuery);
  }
}

module.exports.statementsDuring = statementsDuring;
