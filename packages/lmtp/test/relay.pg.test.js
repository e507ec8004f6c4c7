'use strict';

/*
 * Mail for users not cut over yet (route `proxy`) relayed to their old server (issue 33.4,
 * issue 32.3): a real Dovecot with its LMTP listener (dovecot-lmtpd) is the upstream named in
 * the users' legacy entries (`relay: lmtp://…`). The message reaches the upstream mailbox
 * (read back over IMAP) and the MTA gets the upstream's own reply per recipient: 250 only
 * after the upstream's 250, its refusal as given, 451 4.4.1 when it does not answer, 451 4.2.1
 * when no relay is configured or a migration holds the user's deliveries; a relay in flight
 * holds the migration's hold back until it ended. `mailgate deliver` relays the same way.
 * Needs root and Dovecot (skips outside CI with the reason).
 */

const { spawnSync } = require('node:child_process');
const dovecot = require('@mailgate/dovecot');
const { addLegacyUser } = require('@mailgate/service');
const { CLI } = require('@mailgate/test-support/db');
const { skipOutsideCI, dovecotMissing } = require('@mailgate/test-support/skip');
const { RawLmtp } = require('./client');
const { startLmtp, stored } = require('./helpers');
const { postfixMissing, startPostfix } = require('./postfix');

const why = skipOutsideCI(__filename, dovecotMissing());
const d = why ? describe.skip : describe;
const whyNoPostfix = why || skipOutsideCI(__filename, postfixMissing(), 'relaying by SMTP');
const dSmtp = whyNoPostfix ? describe.skip : describe;

const msg = (id) =>
  `From: Ann <ann@example.org>\r\nTo: pat@example.com\r\nSubject: relayed ${id}\r\nMessage-ID: <${id}@example.org>\r\n\r\nFor the old server\r\n..dot line\r\n`;

d('mail for proxied users relayed to the upstream LMTP server', () => {
  let t;
  let up;
  let gonePort;
  let lmtpPort;

  beforeAll(async () => {
    t = await startLmtp({ users: ['pat', 'pia', 'alice', 'ghost', 'gone', 'sam'] });
    lmtpPort = await dovecot.freePort();
    up = await dovecot.start({
      format: 'maildir',
      lmtpPort,
      users: [
        { user: 'pat', password: 'pat-upstream-pw' },
        { user: 'pia', password: 'pia-upstream-pw' },
        { user: 'sam', password: 'sam-upstream-pw' },
      ],
    });
    gonePort = await dovecot.freePort();
    const cfg = t.service.config;
    for (const u of ['pat', 'ghost'])
      addLegacyUser(cfg, u, { relay: `lmtp://127.0.0.1:${lmtpPort}` });
    addLegacyUser(cfg, 'gone', { relay: `lmtp://127.0.0.1:${gonePort}` });
    // pia is on proxy with no relay: deferred as before.
    for (const u of ['pat', 'pia', 'ghost', 'gone']) await t.service.users.setRoute(u, 'proxy');
  }, 60000);

  afterAll(async () => {
    if (t) await t.close();
    if (up) await up.stop();
  });

  async function session() {
    const c = await RawLmtp.connect({ port: t.port });
    expect((await c.reply()).code).toBe(220);
    expect((await c.cmd('LHLO mta.test')).code).toBe(250);
    return c;
  }

  /** The Message-IDs in a Dovecot user's INBOX, read over IMAP. */
  async function upstreamIds(user, password) {
    return dovecot.withImapClient({ ...up, user, password }, async (c) => {
      const ids = [];
      const box = await c.mailboxOpen('INBOX');
      if (!box.exists) return ids;
      for await (const m of c.fetch('1:*', { envelope: true })) ids.push(m.envelope.messageId);
      return ids;
    });
  }

  test('a proxied user with a relay: the upstream stores it, readable over IMAP, after its 250', async () => {
    const c = await session();
    try {
      expect((await c.cmd('MAIL FROM:<ann@example.org>')).code).toBe(250);
      expect((await c.cmd('RCPT TO:<pat@example.com>')).code).toBe(250);
      expect((await c.cmd('RCPT TO:<alice@example.com>')).code).toBe(250);
      expect((await c.cmd('DATA')).code).toBe(354);
      c.write(msg('r1') + '.\r\n');
      const [toPat, toAlice] = await c.replies(2);
      expect(toPat.text).toMatch(/^250 2\.0\.0 <pat@example\.com> Relayed upstream: /);
      expect(toAlice.text).toMatch(/^250 2\.0\.0 <alice@example\.com> Saved/);
    } finally {
      c.end();
    }
    expect(await upstreamIds('pat', 'pat-upstream-pw')).toEqual(['<r1@example.org>']);
    // Not kept here: it is the old server's until the cutover's import takes it.
    expect(await stored(t.service, 'pat', 'INBOX')).toEqual([]);
    // The local recipient of the same transaction got it as always.
    expect(await stored(t.service, 'alice', 'INBOX')).toHaveLength(1);
    // The upstream got the message as received (dot-unstuffed, no headers of ours added).
    const raw = await dovecot.withImapClient(
      { ...up, user: 'pat', password: 'pat-upstream-pw' },
      async (cl) => {
        await cl.mailboxOpen('INBOX');
        return (await cl.fetchOne('1', { source: true })).source.toString('latin1');
      },
    );
    expect(raw).toContain('\r\n.dot line\r\n');
    expect(raw).not.toMatch(/Delivered-To: pat@example\.com\r\n.*Delivered-To: pat@example\.com/s);
  });

  test("the upstream's refusal is passed on; no answer is 451 4.4.1; no relay is 451 4.2.1", async () => {
    const c = await session();
    try {
      await c.cmd('MAIL FROM:<ann@example.org>');
      // ghost's relay points at a server that has no such user: its own 550 5.1.1.
      expect((await c.cmd('RCPT TO:<ghost@example.com>')).code).toBe(250);
      // gone's server does not answer at all.
      expect((await c.cmd('RCPT TO:<gone@example.com>')).code).toBe(250);
      expect((await c.cmd('DATA')).code).toBe(354);
      c.write(msg('r2') + '.\r\n');
      const [ghost, gone] = await c.replies(2);
      expect(ghost.text).toMatch(/^550 5\.1\.1 <ghost@example\.com> Relayed upstream: /);
      expect(gone.text).toMatch(/^451 4\.4\.1 <gone@example\.com> /);
      expect(gone.text).not.toMatch(/ECONN|127\.0\.0\.1/);
      await c.cmd('MAIL FROM:<ann@example.org>');
      expect((await c.cmd('RCPT TO:<pia@example.com>')).text).toMatch(/^451 4\.2\.1 /);
    } finally {
      c.end();
    }
    expect(await upstreamIds('pia', 'pia-upstream-pw')).toEqual([]);
  });

  test('a migration hold waits for relays in flight and defers new mail until the route switch', async () => {
    const store = t.service.store;
    const pat = await t.service.store.getUser('pat');
    // A relay in flight: the user's shared delivery gate held until released.
    let release;
    const inFlight = store.withDeliveryGate(pat.id, () => new Promise((r) => (release = r)));
    while (!release) await new Promise((r) => setImmediate(r));
    let held = false;
    const hold = store.holdDeliveries('pat').then(() => (held = true));
    // The hold is recorded at once (new mail is deferred from now on)…
    for (;;) {
      if ((await store.getUser('pat')).delivery_hold) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const c = await session();
    try {
      await c.cmd('MAIL FROM:<ann@example.org>');
      expect((await c.cmd('RCPT TO:<pat@example.com>')).text).toMatch(/^451 4\.2\.1 /);
      // …but the hold is not complete while the relay that began before it still runs.
      expect(held).toBe(false);
      release();
      await inFlight;
      await hold;
      expect(held).toBe(true);
    } finally {
      c.end();
    }
    // The route switch ends the hold: from now on stored here.
    await t.service.users.setRoute('pat', 'store');
    expect((await store.getUser('pat')).delivery_hold).toBe(false);
    const c2 = await session();
    try {
      await c2.cmd('MAIL FROM:<ann@example.org>');
      expect((await c2.cmd('RCPT TO:<pat@example.com>')).code).toBe(250);
      await c2.cmd('DATA');
      c2.write(msg('r3') + '.\r\n');
      expect((await c2.reply()).text).toMatch(/^250 2\.0\.0 <pat@example\.com> Saved/);
    } finally {
      c2.end();
    }
    expect(await stored(t.service, 'pat', 'INBOX')).toHaveLength(1);
    expect(await upstreamIds('pat', 'pat-upstream-pw')).toEqual(['<r1@example.org>']);
    await t.service.users.setRoute('pat', 'proxy');
  });

  test('a recipient accepted for relaying whose hold began before DATA is deferred', async () => {
    const c = await session();
    try {
      await c.cmd('MAIL FROM:<ann@example.org>');
      expect((await c.cmd('RCPT TO:<pat@example.com>')).code).toBe(250);
      await t.service.store.holdDeliveries('pat');
      await c.cmd('DATA');
      c.write(msg('r4') + '.\r\n');
      expect((await c.reply()).text).toMatch(/^451 4\.2\.1 <pat@example\.com> /);
    } finally {
      c.end();
      await t.service.store.releaseDeliveries('pat');
    }
    expect(await upstreamIds('pat', 'pat-upstream-pw')).toEqual(['<r1@example.org>']);
  });

  test('mailgate deliver relays too: exit 0 after the upstream took it, 75 when it does not answer', () => {
    const run = (address, id) =>
      spawnSync(process.execPath, [CLI, 'deliver', '-a', address, '-f', 'ann@example.org'], {
        input: msg(id).replace(/\r\n/g, '\n'),
        env: {
          ...process.env,
          DATABASE_URL: t.db.url,
          MAILGATE_HOME: t.home,
          LOG_LEVEL: 'error',
        },
        encoding: 'utf8',
      });
    const ok = run('pat@example.com', 'r5');
    expect({ code: ok.status, stderr: ok.stderr }).toEqual({ code: 0, stderr: '' });
    const gone = run('gone@example.com', 'r6');
    expect(gone.status).toBe(75);
    expect(gone.stderr).toMatch(/^UPSTREAM_DELIVERY_FAILED: /m);
    const ghost = run('ghost@example.com', 'r7');
    expect(ghost.status).toBe(67);
    expect(ghost.stderr).toMatch(/^UPSTREAM_DELIVERY_REFUSED: .* 550 5\.1\.1$/m);
  });

  test('after the deliver run the upstream holds both relayed messages, once each', async () => {
    expect((await upstreamIds('pat', 'pat-upstream-pw')).sort()).toEqual([
      '<r1@example.org>',
      '<r5@example.org>',
    ]);
  });
  dSmtp('to an old server that takes mail by SMTP', () => {
    let pf;
    beforeAll(async () => {
      // A real Postfix as the old server's MX, delivering into the Dovecot by LMTP.
      pf = await startPostfix({ lmtpPort, users: ['sam'] });
      addLegacyUser(t.service.config, 'sam', { relay: `smtp://127.0.0.1:${pf.smtpPort}` });
      await t.service.users.setRoute('sam', 'proxy');
    }, 60000);
    afterAll(async () => {
      if (pf) await pf.stop();
    });

    test("Postfix's 250 is passed on and the message reaches the upstream mailbox", async () => {
      const c = await session();
      try {
        await c.cmd('MAIL FROM:<ann@example.org>');
        expect((await c.cmd('RCPT TO:<sam@example.test>')).code).toBe(250);
        await c.cmd('DATA');
        c.write(msg('s1') + '.\r\n');
        expect((await c.reply()).text).toMatch(
          /^250 2\.0\.0 <sam@example\.test> Relayed upstream: .*queued/,
        );
      } finally {
        c.end();
      }
      // Postfix delivers it on (its queue, then Dovecot's LMTP).
      let ids = [];
      for (let i = 0; i < 600 && !ids.length; i++) {
        ids = await upstreamIds('sam', 'sam-upstream-pw');
        if (!ids.length) await new Promise((r) => setTimeout(r, 100));
      }
      expect(ids).toEqual(['<s1@example.org>']);
      expect(await stored(t.service, 'sam', 'INBOX')).toEqual([]);
    });
  });
});
