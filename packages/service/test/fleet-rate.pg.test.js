'use strict';

/*
 * The migration's messages/s cap in a real run (issue 33.2, MAILGATE_MIGRATE_RATE): one
 * account of N messages on a real Dovecot, migrated by the fleet's worker at R messages/s,
 * takes at least N / R seconds from its start to its cutover. A lower bound only: it holds on
 * any machine, however busy (a run is never asserted to be fast). The arithmetic of the cap
 * (per window, shared accounts, a share that grows) is test/pace.test.js's, on a clock of its
 * own. Needs root and Dovecot (skips outside CI with the reason).
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const dovecot = require('@mailgate/dovecot');
const { createTestDatabase } = require('@mailgate/test-support/db');
const { skipOutsideCI, dovecotMissing } = require('@mailgate/test-support/skip');
const { createMailService } = require('../lib');

const why = skipOutsideCI(__filename, dovecotMissing());
const d = why ? describe.skip : describe;

const N = 120;
const RATE = 15; // messages/s: at least 8 s for the account (about 3 s without the cap here)

d('MAILGATE_MIGRATE_RATE in a real run', () => {
  let db;
  let home;
  let up;
  let service;

  beforeAll(async () => {
    db = await createTestDatabase();
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-fleet-rate-'));
    // A Maildir of N small messages.
    const md = path.join(home, 'Maildir');
    for (const sub of ['cur', 'new', 'tmp']) fs.mkdirSync(path.join(md, sub), { recursive: true });
    for (let i = 1; i <= N; i++) {
      fs.writeFileSync(
        path.join(md, 'cur', `${1700000000 + i}.M${i}P1.rate:2,`),
        `From: a@example.org\r\nSubject: paced ${i}\r\nMessage-ID: <p${i}@example.org>\r\n\r\nbody ${i}\r\n`,
      );
    }
    up = await dovecot.start({
      format: 'maildir',
      users: [{ user: 'paced', password: 'paced-upstream-pw', mail: md }],
    });
    service = await createMailService({
      knex: db.knex,
      env: {
        MAILGATE_HOME: home,
        LOG_LEVEL: 'silent',
        MAILGATE_MIGRATE_RATE: String(RATE),
        MAILGATE_MIGRATE_PER_HOST: '1',
        PACED_PW: 'paced-upstream-pw',
      },
    });
  }, 60000);

  afterAll(async () => {
    if (service) await service.close();
    if (up) await up.stop();
    if (db) await db.drop();
    if (home) fs.rmSync(home, { recursive: true, force: true });
  });

  test(`${N} messages at ${RATE}/s take at least ${N / RATE} s, and all arrive`, async () => {
    await service.fleet.register([
      {
        user: 'paced',
        host: up.host,
        port: up.port,
        login: 'paced',
        passwordSource: 'env:PACED_PW',
        security: 'plaintext',
        folders: null,
        relay: null,
      },
    ]);
    const stop = new AbortController();
    const t0 = process.hrtime.bigint();
    try {
      await service.fleet.work({ concurrency: 1, signal: stop.signal, untilDone: true });
    } finally {
      stop.abort();
    }
    const wall = Number(process.hrtime.bigint() - t0) / 1e9;
    const rep = await service.fleet.report();
    const acct = rep.accounts.find((a) => a.user === 'paced');
    expect(acct).toMatchObject({ state: 'cutover', messages: N, upstreamMessages: N });
    // The account's own run (the worker's clock, start to cutover) and the test's wall time.
    expect(acct.seconds).toBeGreaterThanOrEqual(N / RATE);
    expect(wall).toBeGreaterThanOrEqual(N / RATE);
  }, 120000);
});
