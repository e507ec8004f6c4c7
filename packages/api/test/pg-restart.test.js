'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { EmbeddedPostgres, openDatabase } = require('@mailgate/service');
const { PgStore } = require('@mailgate/store');
const { build } = require('../lib/app');
const { API_DB } = require('../lib/server');

// Its own embedded PostgreSQL in a scratch MAILGATE_HOME (not the suite's shared server),
// so it can be stopped and started under load.
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'mailgate-restart-'));
const pg = new EmbeddedPostgres(home);
let db;
let app;
let token;

beforeAll(async () => {
  const url = await pg.acquire({ persistent: true });
  // The server's own database options (timeouts, pool) on this scratch server.
  db = await openDatabase({ databaseUrl: url, home }, API_DB);
  const store = new PgStore(db.knex);
  const u = await store.createUser('rita');
  const mb = await store.ensureMailbox(u.id, 'INBOX');
  expect(mb.name).toBe('INBOX');
  token = (await store.createToken(u.id)).token;
  app = await build({ knex: db.knex, docs: false });
  await app.ready();
});

afterAll(async () => {
  if (app) await app.close();
  if (db) await db.close();
  await pg.stop();
  fs.rmSync(home, { recursive: true, force: true });
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test('503 while PostgreSQL is down, recovers without a restart of the API', async () => {
  const statuses = [];
  let phase = 'before';
  let stop = false;
  const worker = async () => {
    while (!stop) {
      const r = await app.inject({
        url: '/api/v1/mailboxes/INBOX/messages?limit=5',
        headers: { authorization: `Bearer ${token}` },
      });
      statuses.push({
        phase,
        status: r.statusCode,
        code: r.statusCode !== 200 && r.json().error.code,
      });
      await sleep(5);
    }
  };
  const load = [worker(), worker(), worker(), worker()];
  await sleep(300);

  // Fast shutdown (what pg_ctl stop -m fast sends): in-flight queries are cancelled.
  phase = 'down';
  process.kill(pg.runningPid(), 'SIGINT');
  for (let i = 0; i < 100 && pg.runningPid(); i++) await sleep(100);
  expect(pg.runningPid()).toBeNull();
  await sleep(700);
  const health = await app.inject({ url: '/api/v1/health' });
  expect(health.statusCode).toBe(503);
  expect(health.json().error.code).toBe('DB_UNAVAILABLE');

  phase = 'restarting';
  await pg.start(pg.readState());
  let recovered = false;
  for (let i = 0; i < 100 && !recovered; i++) {
    await sleep(100);
    recovered = statuses.slice(-4).every((s) => s.status === 200) && statuses.length > 0;
  }
  phase = 'after';
  await sleep(300);
  stop = true;
  await Promise.all(load);

  const bad = statuses.filter((s) => s.status !== 200 && s.status !== 503);
  expect(bad).toEqual([]);
  expect(statuses.filter((s) => s.phase === 'before').every((s) => s.status === 200)).toBe(true);
  const down = statuses.filter((s) => s.phase === 'down');
  expect(down.length).toBeGreaterThan(0);
  expect(down.filter((s) => s.status === 503).length).toBeGreaterThan(0);
  expect(down.filter((s) => s.status === 503).every((s) => s.code === 'DB_UNAVAILABLE')).toBe(true);
  const after = statuses.filter((s) => s.phase === 'after');
  expect(after.length).toBeGreaterThan(0);
  expect(after.every((s) => s.status === 200)).toBe(true);
  expect((await app.inject({ url: '/api/v1/health' })).statusCode).toBe(200);
});
