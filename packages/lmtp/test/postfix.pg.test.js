'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ImapFlow } = require('imapflow');
const { createMailService } = require('@mailgate/service');
const { createImapServer } = require('@mailgate/imap');
const { createTestDatabase, spawnCli } = require('@mailgate/test-support/db');
const { skipOutsideCI } = require('@mailgate/test-support/skip');
const { createLmtpServer } = require('../lib');
const { postfixMissing, startPostfix, smtpSource, freePort } = require('./postfix');

/*
 * A real MTA in front (issue 32): Debian's Postfix, a private instance on loopback ports,
 * delivers every recipient of example.test to mailgate's LMTP (virtual_transport =
 * lmtp:inet:…). An IMAP client IDLEing on the INBOX sees the message; an unknown user is
 * bounced with 550 5.1.1; smtp-source -L talks LMTP straight to mailgate. The fault test kills
 * the `mailgate lmtp` process (SIGKILL) in the middle of a run and starts it again: Postfix's
 * queue empties and every message is in the mailbox, at most duplicated where the kill fell
 * between a commit and its reply, none lost.
 */

const why = skipOutsideCI(__filename, postfixMissing());
const describePostfix = why ? describe.skip : describe;
const FAULT_MESSAGES = Number(process.env.LMTP_FAULT_MESSAGES) || 2000;

describePostfix('Postfix → mailgate LMTP', () => {
  let db;
  let service;
  let home;
  let lmtp;
  let lmtpPort;
  let imap;
  let imapPort;
  let pf;

  beforeAll(async () => {
    db = await createTestDatabase();
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-lmtp-pf-'));
    service = await createMailService({
      knex: db.knex,
      env: { MAILGATE_HOME: home, LOG_LEVEL: 'silent' },
    });
    await service.users.create('alice', { password: 'alice pw 123' });
    for (const u of ['bob', 'carol']) await service.users.create(u, {});
    await (await service.openBackend('pg', 'alice')).createMailbox('INBOX');
    lmtpPort = await freePort();
    lmtp = createLmtpServer({ service, hostname: 'mailgate.test' });
    await lmtp.listen({ port: lmtpPort, host: '127.0.0.1' });
    imap = createImapServer({ service, limits: { idlePollMs: 100 } });
    imapPort = (await imap.listen({ port: 0, host: '127.0.0.1' })).port;
    // ghost is a user Postfix knows and mailgate does not: mailgate's 550 5.1.1 bounces it.
    pf = await startPostfix({ lmtpPort, users: ['alice', 'bob', 'carol', 'ghost'] });
  });

  afterAll(async () => {
    if (pf) await pf.stop();
    if (imap) await imap.close();
    if (lmtp) await lmtp.close({ graceMs: 1000 });
    if (service) await service.close();
    if (db) await db.drop();
    if (home) fs.rmSync(home, { recursive: true, force: true });
  });

  /** Waits until check() is true (polling), failing with the Postfix log after ms. */
  async function until(check, ms, what) {
    const end = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > end)
        throw new Error(`${what} not reached; postfix log:\n${pf.log().slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  const total = async (user) =>
    (await (await service.openBackend('pg', user)).status('INBOX').catch(() => ({ total: 0 })))
      .total;

  test('a message sent to Postfix reaches an IDLEing IMAP client; an unknown user bounces with 550 5.1.1', async () => {
    const client = new ImapFlow({
      host: '127.0.0.1',
      port: imapPort,
      secure: false,
      auth: { user: 'alice', pass: 'alice pw 123' },
      logger: false,
    });
    await client.connect();
    await client.mailboxOpen('INBOX');
    const seen = new Promise((resolve) => client.on('exists', (e) => resolve(e.count)));
    const idling = client.idle();
    const sent = await smtpSource([
      '-m',
      '1',
      '-f',
      'ann@example.org',
      '-t',
      'alice@example.test',
      `127.0.0.1:${pf.smtpPort}`,
    ]);
    expect(sent.code).toBe(0);
    expect(await seen).toBe(1);
    const m = await client.fetchOne('*', { source: true });
    const raw = m.source.toString('latin1');
    // The delivery headers first, then Postfix's Received line and the message.
    expect(raw).toMatch(
      /^Return-Path: <ann@example\.org>\r\nDelivered-To: alice@example\.test\r\nReceived: from /,
    );
    await client.logout();
    await idling.catch(() => {});

    expect(
      (
        await smtpSource([
          '-m',
          '1',
          '-f',
          'ann@example.org',
          '-t',
          'ghost@example.test',
          `127.0.0.1:${pf.smtpPort}`,
        ])
      ).code,
    ).toBe(0);
    await until(
      () => /to=<ghost@example\.test>.*status=bounced.*550 5\.1\.1/.test(pf.log()),
      60000,
      'the bounce',
    );
    await until(() => pf.queued() === 0, 60000, 'an empty queue');
  });

  test('smtp-source -L straight at the LMTP port: every message stored', async () => {
    const r = await smtpSource([
      '-L',
      '-s',
      '2',
      '-m',
      '40',
      '-f',
      'ann@example.org',
      '-t',
      'bob@example.test',
      `127.0.0.1:${lmtpPort}`,
    ]);
    expect(r).toEqual({ code: 0, stderr: '' });
    expect(await total('bob')).toBe(40);
  });

  test(`fault: mailgate lmtp killed in the middle of ${FAULT_MESSAGES} messages, restarted: none lost`, async () => {
    // The LMTP server becomes a process of its own on the same port, so it can be killed.
    await lmtp.close({ graceMs: 1000 });
    lmtp = null;
    const start = () => {
      const child = spawnCli(['lmtp'], {
        url: db.url,
        env: { LMTP_PORT: String(lmtpPort), LMTP_HOST: '127.0.0.1', MAILGATE_HOME: home },
      });
      return new Promise((resolve, reject) => {
        let err = '';
        child.stderr.on('data', (d) => {
          err += d;
          if (/LMTP listening/.test(err)) resolve(child);
        });
        child.once('exit', (c) => reject(new Error(`mailgate lmtp exited ${c}: ${err}`)));
      });
    };
    let child = await start();
    const sending = smtpSource([
      '-s',
      '5',
      '-m',
      String(FAULT_MESSAGES),
      '-f',
      'ann@example.org',
      '-t',
      'carol@example.test',
      `127.0.0.1:${pf.smtpPort}`,
    ]);
    await until(
      async () => (await total('carol')) >= FAULT_MESSAGES / 4,
      240000,
      'a quarter delivered',
    );
    const killed = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await killed;
    const atKill = await total('carol');
    await new Promise((r) => setTimeout(r, 1500));
    child = await start();
    try {
      expect((await sending).code).toBe(0);
      await until(
        async () => {
          if (pf.queued() > 0) {
            pf.flush();
            return false;
          }
          return (await total('carol')) >= FAULT_MESSAGES;
        },
        300000,
        'every message delivered and the queue empty',
      );
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    expect(atKill).toBeLessThan(FAULT_MESSAGES);
    const be = await service.openBackend('pg', 'carol');
    const { rows } = await be.scan('INBOX');
    const ids = rows.map((r) => r.messageId);
    const distinct = new Set(ids);
    expect(ids.every(Boolean)).toBe(true);
    // None lost: every message Postfix took is there.
    expect(distinct.size).toBe(FAULT_MESSAGES);
    // Duplicates only where the kill fell between a commit and its 250: at most one per
    // delivery in flight (Postfix's LMTP concurrency, 20 by default).
    expect(ids.length - distinct.size).toBeLessThanOrEqual(20);
    expect(pf.queued()).toBe(0);
    expect(pf.log()).not.toMatch(/to=<carol@example\.test>.*status=bounced/);
  }, 600000);
});
