'use strict';

/*
 * The migration end to end on a real Dovecot (issue 12 item 4): a user routed to `proxy` logs
 * in to mailgate with their mailgate password and reads, flags and IDLEs on their Dovecot
 * account through the byte relay; `mailgate migrate --no-cutover` pre-copies while they stay
 * proxied; mail delivered to Dovecot and changes made through the proxy before cutover arrive
 * with the next `mailgate migrate`, which flips the route and closes the relayed session; the
 * same imapflow client then reconnects and sees the same UIDVALIDITY, UIDs, flags and bytes,
 * now served from PostgreSQL. `migrate --on-login` runs the same migration in the background of
 * a `mailgate imap` process at the user's first proxied login. Needs Dovecot and root (skips
 * with a reason outside CI).
 */

const fs = require('node:fs');
const path = require('node:path');
const { ImapFlow } = require('imapflow');
const { createMailService } = require('@mailgate/service');
const { createImapServer } = require('@mailgate/imap');
const dovecot = require('@mailgate/dovecot');
const { skipOutsideCI, dovecotMissing } = require('@mailgate/test-support/skip');
const net = require('node:net');
const { useCliSuite, spawnCli } = require('@mailgate/test-support/db');
const { msg } = require('@mailgate/test-support/mail');

const d = skipOutsideCI(__filename, dovecotMissing()) ? describe.skip : describe;

const PAT_PW = 'pat mailgate pw';

d('migration proxy and mailgate migrate on a real Dovecot', () => {
  let inst;
  let service;
  let server;
  let port;
  let home;
  // Registered before useCliSuite's: the server stops before the test database is dropped.
  afterAll(async () => {
    if (server) await server.close();
    if (service) await service.close();
    if (inst) await inst.stop();
  });
  const ctx = useCliSuite('migrate');
  const env = () => ({ UP_PW: inst.password, MAILGATE_HOME: home });

  const flow = (o) => {
    const c = new ImapFlow({ secure: false, logger: false, ...o });
    c.on('error', () => {});
    return c;
  };
  const viaMailgate = (pass = PAT_PW) =>
    flow({ host: '127.0.0.1', port, auth: { user: 'pat', pass } });
  const direct = () =>
    flow({ host: inst.host, port: inst.port, auth: { user: inst.user, pass: inst.password } });

  /** Everything a client caches about a mailbox: UIDVALIDITY, and uid, flags, bytes per message. */
  const snapshot = async (c, box) => {
    const mb = await c.mailboxOpen(box);
    const msgs = [];
    if (mb.exists) {
      for await (const m of c.fetch('1:*', { uid: true, flags: true, source: true })) {
        msgs.push({
          uid: m.uid,
          flags: [...m.flags].filter((f) => f !== '\\Recent').sort(),
          source: m.source.toString('latin1'),
        });
      }
    }
    return { uidValidity: Number(mb.uidValidity), msgs };
  };
  const upstreamSnapshot = async (box) => {
    const c = direct();
    await c.connect();
    try {
      return await snapshot(c, box);
    } finally {
      await c.logout();
    }
  };
  const migrate = (...extra) =>
    ctx.cli(['migrate', 'pat', '--json', '--quiet', ...extra], { env: env() });

  beforeAll(async () => {
    home = path.join(ctx.tmp, 'home');
    fs.mkdirSync(home, { recursive: true });
    inst = await dovecot.start({ format: 'maildir' });
    for (let i = 1; i <= 5; i++) {
      await dovecot.deliver(inst.dir, msg({ subject: `inbox ${i}`, body: `inbox body ${i}\n` }));
    }
    for (let i = 1; i <= 2; i++) {
      await dovecot.deliver(inst.dir, msg({ subject: `archived ${i}`, body: `old ${i}\n` }), {
        mailbox: 'Archive',
      });
    }
    const c = direct();
    await c.connect();
    try {
      await c.mailboxOpen('INBOX');
      await c.messageDelete('2', { uid: true }); // a gap the client knows
      await c.messageFlagsAdd('1', ['\\Seen'], { uid: true });
    } finally {
      await c.logout();
    }
    service = await createMailService({
      knex: ctx.db.knex,
      env: { ...env(), LOG_LEVEL: 'silent' },
    });
    await service.users.create('pat', { password: PAT_PW });
    server = createImapServer({ service, limits: { idlePollMs: 100 } });
    ({ port } = await server.listen({ port: 0, host: '127.0.0.1' }));
    const route = ctx.cli(['user', 'route', 'pat', 'proxy', '--json'], { env: env() });
    expect(route.json).toEqual({ user: 'pat', route: 'proxy', previous: 'store' });
  }, 120000);

  let client;
  let before;

  const addUpstream = (...security) =>
    ctx.cli(
      [
        'legacy',
        'add-user',
        'pat',
        '--imap-host',
        inst.host,
        '--imap-port',
        String(inst.port),
        '--imap-login',
        inst.user,
        '--imap-password-env',
        'UP_PW',
        ...security,
        '--json',
      ],
      { env: env() },
    );

  test('STARTTLS is required by default: no plaintext login to a Dovecot without TLS', async () => {
    const add = addUpstream();
    expect(add.code).toBe(0);
    expect(add.json.imap).toMatchObject({ security: 'starttls' });
    // The proxy: mailgate's password is right, but the upstream offers no STARTTLS.
    const c = viaMailgate();
    await expect(c.connect()).rejects.toMatchObject({ serverResponseCode: 'UNAVAILABLE' });
    c.close();
    expect(server.proxySessions.size).toBe(0);
    // The import and verify of `migrate` (legacy connect): a coded error, nothing imported.
    const r = migrate('--no-cutover');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/^UPSTREAM_TLS_REQUIRED: /m);
    expect(r.stderr).not.toContain(inst.password);
    const count = await ctx.db.knex.raw(
      `SELECT count(*)::int AS n FROM messages m JOIN users u ON u.id = m.user_id WHERE u.name = 'pat'`,
    );
    expect(count.rows[0].n).toBe(0);
    // Plaintext only by explicit choice.
    const plain = addUpstream('--imap-plaintext');
    expect(plain.code).toBe(0);
    expect(plain.json.imap).toMatchObject({ security: 'plaintext' });
    expect(plain.json.imap).not.toHaveProperty('tls');
  });

  test('a proxied user is authenticated by mailgate and relayed to Dovecot, IDLE included', async () => {
    // mailgate's password decides, not the upstream one.
    const wrong = viaMailgate(inst.password);
    await expect(wrong.connect()).rejects.toMatchObject({ authenticationFailed: true });
    wrong.close();
    client = viaMailgate();
    await client.connect();
    expect(server.proxySessions.size).toBe(1);
    const up = await upstreamSnapshot('INBOX');
    const seen = await snapshot(client, 'INBOX');
    expect(seen).toEqual(up);
    expect(seen.msgs.map((m) => m.uid)).toEqual([1, 3, 4, 5]);
    // A flag set through the proxy lands upstream.
    await client.messageFlagsAdd('3', ['\\Flagged'], { uid: true });
    expect((await upstreamSnapshot('INBOX')).msgs[1].flags).toEqual(['\\Flagged']);
    // IDLE through the relay: a delivery upstream is pushed to the client.
    const exists = new Promise((resolve) => client.once('exists', resolve));
    const idling = client.idle();
    await new Promise((r) => setTimeout(r, 300));
    await dovecot.deliver(inst.dir, msg({ subject: 'during idle', body: 'pushed\n' }));
    const ev = await Promise.race([
      exists,
      new Promise((_, reject) => setTimeout(() => reject(new Error('no EXISTS in IDLE')), 15000)),
    ]);
    expect(ev.count).toBe(5);
    // The next command ends the IDLE (imapflow sends DONE), and idle() resolves then.
    before = await snapshot(client, 'INBOX');
    await idling;
    expect(before.msgs.map((m) => m.uid)).toEqual([1, 3, 4, 5, 6]);
  });

  test('migrate --no-cutover pre-copies and verifies; the user stays proxied', async () => {
    const r = migrate('--no-cutover');
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ route: 'proxy', previousRoute: 'proxy', cutover: false });
    expect(r.json.import.imported).toBe(7);
    expect(r.json.verify.ok).toBe(true);
    const inbox = r.json.verify.mailboxes.find((m) => m.mailbox === 'INBOX');
    expect(inbox).toMatchObject({ uidsKept: true, missing: 0, differing: 0 });
    expect(inbox.local).toEqual(inbox.upstream);
    expect(inbox.upstream.messages).toBe(5);
    expect(server.proxySessions.size).toBe(1);
    // A re-run fetches nothing.
    expect(migrate('--no-cutover').json.import.imported).toBe(0);
  });

  test('changes before cutover arrive with migrate; the relayed session is closed', async () => {
    await dovecot.deliver(inst.dir, msg({ subject: 'late mail', body: 'late\n' }));
    await client.messageFlagsAdd('4', ['\\Seen', '\\Answered'], { uid: true });
    await client.messageDelete('5', { uid: true });
    // Upstream's HIGHESTMODSEQ well above anything the store counts by itself (a keyword set
    // and cleared leaves the flags as they were).
    for (let i = 0; i < 15; i++) {
      await client.messageFlagsAdd('1:*', ['$tmp'], { uid: true });
      await client.messageFlagsRemove('1:*', ['$tmp'], { uid: true });
    }
    const closed = new Promise((resolve) => client.once('close', resolve));
    const r = migrate();
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ route: 'store', previousRoute: 'proxy', cutover: true });
    expect(r.json.import.imported).toBe(1);
    expect(r.json.verify.ok).toBe(true);
    await Promise.race([
      closed,
      new Promise((_, reject) => setTimeout(() => reject(new Error('session not closed')), 10000)),
    ]);
    expect(server.proxySessions.size).toBe(0);
  });

  test('after cutover the client sees the same UIDVALIDITY, UIDs, flags and bytes, from the store', async () => {
    client = viaMailgate();
    await client.connect();
    expect(server.proxySessions.size).toBe(0);
    // CONDSTORE/QRESYNC (RFC 7162): the store's HIGHESTMODSEQ is at least upstream's, so a
    // client resyncing with the modseq it had upstream is told about every later change.
    const up = direct();
    await up.connect();
    const upHms = BigInt((await up.mailboxOpen('INBOX', { readOnly: true })).highestModseq);
    await up.logout();
    const mineHms = BigInt((await client.mailboxOpen('INBOX')).highestModseq);
    expect(upHms).toBeGreaterThan(30n);
    expect(mineHms).toBeGreaterThanOrEqual(upHms);
    for (const box of ['INBOX', 'Archive']) {
      const up = await upstreamSnapshot(box);
      const mine = await snapshot(client, box);
      expect(mine).toEqual(up);
    }
    const inbox = await snapshot(client, 'INBOX');
    expect(inbox.uidValidity).toBe(before.uidValidity);
    expect(inbox.msgs.map((m) => m.uid)).toEqual([1, 3, 4, 6, 7]);
    // What the client cached before cutover is still true (minus the expunged uid 5).
    for (const m of before.msgs.filter((x) => x.uid !== 5 && x.uid !== 4)) {
      expect(inbox.msgs.find((x) => x.uid === m.uid)).toEqual(m);
    }
    // Served by PostgreSQL now: a flag set here does not reach Dovecot.
    await client.messageFlagsAdd('7', ['\\Flagged'], { uid: true });
    const row = await ctx.db.knex.raw(
      `SELECT m.flags FROM messages m JOIN users u ON u.id = m.user_id
         JOIN mailboxes b ON b.id = m.mailbox_id
        WHERE u.name = 'pat' AND b.name = 'INBOX' AND m.uid = 7`,
    );
    expect(row.rows[0].flags).toContain('\\Flagged');
    expect((await upstreamSnapshot('INBOX')).msgs.find((m) => m.uid === 7).flags).toEqual([]);
    await client.logout();
  });

  test('migrate --on-login: the first proxied login migrates in the background (mailgate imap)', async () => {
    const qenv = { ...env(), QPW: PAT_PW };
    expect(ctx.cli(['user', 'add', 'quinn', '--password-env', 'QPW'], { env: qenv }).code).toBe(0);
    const add = ctx.cli(
      [
        'legacy',
        'add-user',
        'quinn',
        '--imap-host',
        inst.host,
        '--imap-port',
        String(inst.port),
      ].concat(['--imap-login', inst.user, '--imap-password-env', 'UP_PW', '--imap-plaintext']),
      { env: env() },
    );
    expect(add.code).toBe(0);
    const armed = ctx.cli(['migrate', 'quinn', '--on-login', '--json'], { env: env() });
    expect(armed.json).toEqual({
      user: 'quinn',
      route: 'proxy',
      previousRoute: 'store',
      onLogin: true,
    });
    const imapPort = await freePort();
    const child = spawnCli(['imap'], {
      url: ctx.db.url,
      env: { ...env(), IMAP_PORT: String(imapPort), IMAP_IDLE_POLL_MS: '100' },
    });
    const exited = new Promise((r) => child.on('exit', r));
    try {
      await waitForPort(imapPort);
      const q = () =>
        flow({ host: '127.0.0.1', port: imapPort, auth: { user: 'quinn', pass: PAT_PW } });
      const first = q();
      const closed = new Promise((r) => first.once('close', r));
      // The migration may finish (and close this relayed session) while imapflow still sets up.
      await first.connect().catch(() => {});
      await Promise.race([
        closed,
        new Promise((_, reject) => setTimeout(() => reject(new Error('no cutover')), 60000)),
      ]);
      const u = await ctx.db.knex('users').where({ name: 'quinn' }).first();
      expect({ route: u.route, armed: u.migrate_on_login }).toEqual({
        route: 'store',
        armed: false,
      });
      const again = q();
      await again.connect();
      for (const box of ['INBOX', 'Archive']) {
        expect(await snapshot(again, box)).toEqual(await upstreamSnapshot(box));
      }
      await again.logout();
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitForPort(port, ms = 30000) {
  const t0 = Date.now();
  for (;;) {
    const ok = await new Promise((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() - t0 > ms) throw new Error(`nothing listens on ${port}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
