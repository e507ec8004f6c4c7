'use strict';

/*
 * Issue 29 item 4, the HTTP part of the abuse suite: one user floods the server with heavy
 * requests (10 parallel COPYs of the whole mailbox, 200-term text searches, 1,000-key IMAP
 * SEARCHes) while an innocent user is measured beside it on both doors, HTTP and IMAP. Asserts
 * that the innocent user is served (and that the attacker's over-limit requests get coded
 * errors); the innocent's latencies are printed as a report, never asserted (shared CPU).
 *
 * The pool is small (5 connections, one more than a user's share, 5 s to get one as in the server) so that the attack is cheap to make
 * decisive: the attacker's searches and copies are made to hold their connection for a
 * while (a `pg_sleep` on the pool before the store's own statement, the way a heavy
 * statement would), so ten of them would hold every connection without the per-user share.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const Knex = require('knex');
const { hashPassword } = require('@mailgate/core');
const { createImapServer } = require('@mailgate/imap');
const { createTestDatabase } = require('@mailgate/test-support/db');
const { msg, importMessages } = require('@mailgate/test-support/mail');
const { RawClient } = require('../packages/imap/test/raw-client');
const { build } = require('@mailgate/api');

const POOL = 5;
const HOLD_S = 3;
const ATTACKER_MESSAGES = 300;

let db;
let knex;
let app;
let imap;
let port;
let tmp;
const tokens = {};
let attackerId;

beforeAll(async () => {
  db = await createTestDatabase();
  knex = Knex({
    client: 'pg',
    connection: db.url,
    pool: { min: 0, max: POOL },
    acquireConnectionTimeout: 5000, // as the API server (server.js)
  });
  app = await build({ knex, docs: false, webPage: false, purge: false });
  await app.ready();
  const service = app.mailService;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mailgate-abuse-'));
  for (const name of ['mallory', 'innocent']) {
    await service.store.createUser(name, { passwordHash: await hashPassword(`${name} pw`) });
    const u = await service.store.getUser(name);
    tokens[name] = (await service.store.createToken(u.id)).token;
  }
  attackerId = (await service.store.getUser('mallory')).id;
  const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot'];
  await importMessages(service.store, path.join(tmp, 'm.mbox'), {
    user: 'mallory',
    mailbox: 'INBOX',
    messages: Array.from({ length: ATTACKER_MESSAGES }, (_, i) =>
      msg({ subject: `flood ${i}`, body: `${words[i % 6]} ${'filler text '.repeat(50)}\n` }),
    ),
  });
  await importMessages(service.store, path.join(tmp, 'i.mbox'), {
    user: 'innocent',
    mailbox: 'INBOX',
    messages: Array.from({ length: 20 }, (_, i) => msg({ subject: `hello ${i}`, body: 'quiet\n' })),
  });
  await service.openBackend('pg', 'mallory').then((be) => be.createMailbox('Copies'));
  // The attacker's heavy statements hold a pooled connection for HOLD_S first.
  const { store } = service;
  for (const method of ['search', 'copyMessages']) {
    const orig = store[method].bind(store);
    store[method] = async (userId, ...rest) => {
      if (userId === attackerId) await store.knex.raw(`SELECT pg_sleep(${HOLD_S})`);
      return orig(userId, ...rest);
    };
  }
  imap = createImapServer({ service });
  ({ port } = await imap.listen({ port: 0, host: '127.0.0.1' }));
}, 120000);

afterAll(async () => {
  if (imap) await imap.close();
  if (app) await app.close();
  if (knex) await knex.destroy();
  if (db) await db.drop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const api = (user, url, opts = {}) =>
  app.inject({
    url,
    method: opts.method || 'GET',
    payload: opts.payload,
    headers: { authorization: `Bearer ${tokens[user]}` },
  });

async function timed(fn) {
  const t0 = performance.now();
  const r = await fn();
  return { r, ms: Math.round(performance.now() - t0) };
}

/** The innocent user's round on both doors: every answer must be a success. */
async function innocentRound(client, i) {
  const page = await timed(() => api('innocent', '/api/v1/mailboxes/INBOX/messages?limit=5'));
  const search = await timed(() => api('innocent', '/api/v1/search?q=text%3Aquiet'));
  const fetch = await timed(() => client.cmd(`f${i}`, 'UID FETCH 1:5 (FLAGS ENVELOPE)'));
  const isearch = await timed(() => client.cmd(`s${i}`, 'UID SEARCH TEXT quiet'));
  expect(page.r.statusCode).toBe(200);
  expect(search.r.statusCode).toBe(200);
  expect(search.r.json().total).toBe(20);
  expect(fetch.r).toMatch(new RegExp(`^f${i} OK`, 'm'));
  expect(isearch.r).toMatch(new RegExp(`^s${i} OK`, 'm'));
  return { http: [page.ms, search.ms], imap: [fetch.ms, isearch.ms] };
}

async function imapLogin(user) {
  const c = await RawClient.connect(port);
  const r = await c.cmd('l', `LOGIN ${user} "${user} pw"`);
  expect(r).toMatch(/^l OK/m);
  return c;
}

function report(title, rounds, attacker) {
  const all = (k) => rounds.flatMap((x) => x[k]).sort((a, b) => a - b);
  const p = (xs, q) => xs[Math.min(xs.length - 1, Math.floor(q * xs.length))];
  const line = (k) => `${k} p50 ${p(all(k), 0.5)} ms, max ${p(all(k), 1)} ms`;
  process.stdout.write(
    `abuse report — ${title}: innocent ${line('http')}; ${line('imap')}; attacker ${attacker}\n`,
  );
}

test('20 parallel heavy searches and COPYs of one user (HTTP and IMAP): the innocent user is served on both doors', async () => {
  const innocent = await imapLogin('innocent');
  expect(await innocent.cmd('sel', 'SELECT INBOX')).toMatch(/^sel OK/m);
  const attackers = await Promise.all(Array.from({ length: 5 }, () => imapLogin('mallory')));
  for (const [i, c] of attackers.entries()) {
    expect(await c.cmd(`a${i}`, 'SELECT INBOX')).toMatch(/^a\d+ OK/m);
  }
  try {
    const t0 = performance.now();
    const flood = [
      // HTTP: ten 20-term substring searches and five COPYs of the whole mailbox.
      ...Array.from({ length: 10 }, (_, i) =>
        api(
          'mallory',
          `/api/v1/search?q=${encodeURIComponent(Array.from({ length: 20 }, (_, k) => `text:x${i}${k}`).join(' OR '))}`,
        ),
      ),
      ...Array.from({ length: 5 }, () =>
        api('mallory', '/api/v1/mailboxes/INBOX/copy', {
          method: 'POST',
          payload: {
            uids: Array.from({ length: ATTACKER_MESSAGES }, (_, k) => k + 1),
            target: 'Copies',
          },
        }),
      ),
      // IMAP: five COPYs and five SEARCHes on the attacker's own connections.
      ...attackers.map((c, i) => {
        // The attacker's commands wait their turn behind its own: a long wait is expected.
        c.write(`c${i} UID COPY 1:* Copies\r\n`);
        return c.waitFor(new RegExp(`^c${i} (OK|NO|BAD)[^\\r\\n]*\\r\\n`, 'm'), 90000);
      }),
    ];
    // Let the flood take its connections, then measure the innocent beside it.
    await new Promise((r) => setTimeout(r, 200));
    const rounds = [];
    for (let i = 0; i < 3; i++) rounds.push(await innocentRound(innocent, i));
    const answers = await Promise.all(flood);
    const statuses = answers.map((a) => (typeof a === 'string' ? a.split(' ')[1] : a.statusCode));
    report(
      '15 heavy HTTP requests + 5 IMAP COPYs',
      rounds,
      `${Math.round(performance.now() - t0)} ms for the flood, answers ${statuses.join(' ')}`,
    );
    // The attacker is slowed down, not failed: its work ran in its own turn.
    for (const a of answers.slice(0, 15)) expect([200, 201, 429]).toContain(a.statusCode);
  } finally {
    for (const c of [innocent, ...attackers]) c.close();
  }
}, 120000);

test('200-term text search (HTTP) and a 1,000-key SEARCH (IMAP) are refused with coded errors; the innocent is served', async () => {
  const innocent = await imapLogin('innocent');
  expect(await innocent.cmd('sel', 'SELECT INBOX')).toMatch(/^sel OK/m);
  const mallory = await imapLogin('mallory');
  expect(await mallory.cmd('sel', 'SELECT INBOX')).toMatch(/^sel OK/m);
  try {
    const q = Array.from({ length: 200 }, (_, k) => `text:w${k}`).join(' ');
    const keys = Array.from({ length: 1000 }, (_, k) => `TEXT k${k}`).join(' ');
    const flood = [
      ...Array.from({ length: 10 }, () =>
        api('mallory', `/api/v1/search?q=${encodeURIComponent(q)}`),
      ),
      mallory.cmd('big', `UID SEARCH ${keys}`),
    ];
    const rounds = [await innocentRound(innocent, 9)];
    const answers = await Promise.all(flood);
    for (const a of answers.slice(0, 10)) {
      expect(a.statusCode).toBe(400);
      expect(a.json().error.code).toBe('QUERY_TOO_COMPLEX');
    }
    expect(answers[10]).toMatch(/^big NO \[LIMIT\]/m);
    report('200-term searches + 1,000-key SEARCH', rounds, 'refused at once');
  } finally {
    innocent.close();
    mallory.close();
  }
}, 120000);
