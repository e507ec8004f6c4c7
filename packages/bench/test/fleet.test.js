'use strict';

/*
 * A whole server migrated (issue 33 item 5, the CI variant of `npm run bench:fleet`): one real
 * Dovecot serving 20 Enron accounts (Maildir++ with folders), registered with
 * `mailgate migrate --accounts FILE` (all routed to proxy, each with `relay` = the Dovecot's
 * LMTP listener), migrated by two `mailgate migrate --worker` processes with the per-host and
 * rate limits on. Meanwhile mail keeps arriving through mailgate's LMTP the whole run: an MTA
 * loop of the test (our LMTP client, one message every ~100 ms round the 20 accounts, each with
 * its own Message-ID, retrying every 4xx as an MTA does) and a real Postfix; mail for an
 * account not cut over yet is relayed to the Dovecot (its 250 passed on), deferred with 451
 * during the account's delivery hold, and stored in mailgate after the cutover. A client flags
 * a message through the IMAP proxy. One worker is killed with SIGKILL in the middle of an
 * account and a third takes over; Dovecot is restarted once. After the run every account is cut
 * over, holds exactly the upstream's messages plus what arrived, each arrival exactly once
 * (relayed ones imported, later ones stored), nothing left upstream only (the report's upstream
 * count is the Dovecot's final count), keeps every folder's UIDVALIDITY, the flag set through
 * the proxy, and the report says so. A 21st account
 * whose upstream refuses connections backs off, fails after MAILGATE_MIGRATE_RETRIES with the
 * reason, and stays on proxy; no more than MAILGATE_MIGRATE_PER_HOST accounts of the Dovecot
 * ran at once.
 * Needs root, Dovecot, Postfix and the shared corpus (skips outside CI with the reason).
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ImapFlow } = require('imapflow');
const { createMailService } = require('@mailgate/service');
const { createImapServer } = require('@mailgate/imap');
const { createLmtpServer } = require('@mailgate/lmtp');
const dovecot = require('@mailgate/dovecot');
const { skipOutsideCI, dovecotMissing } = require('@mailgate/test-support/skip');
const { createTestDatabase, runCli } = require('@mailgate/test-support/db');
const { corpusDir } = require('@mailgate/test-support/corpus');
const { postfixMissing, startPostfix, smtpSource } = require('../../lmtp/test/postfix');
const { RawLmtp } = require('../../lmtp/test/client');
const { startFleetDovecot, writeAccountsFile, spawnWorker, enronUsers } = require('../lib/fleet');
const { freePort } = require('../../lmtp/test/postfix');

// Upstream errors an account may meet before it fails (MAILGATE_MIGRATE_RETRIES).
const RETRIES = 6;

const why = skipOutsideCI(__filename, dovecotMissing() || postfixMissing());
const d = why ? describe.skip : describe;

// MAILGATE_FLEET_ACCOUNTS=all: the same run over all 137 accounts of the corpus (issue 33.5's
// whole test, 44,755 messages; not in CI for its length: npm run test:fleet-faults).
const ALL = process.env.MAILGATE_FLEET_ACCOUNTS === 'all';
// Ranks 21-40 by size of the corpus's 137 accounts: 1,388 messages, several with folders.
const TWENTY = [
  'arora-h', 'kuykendall-t', 'fischer-m', 'harris-s', 'lokay-m', 'gay-r', 'hyatt-k',
  'allen-p', 'sanchez-m', 'richey-c', 'cuilla-m', 'dorland-c', 'horton-s', 'grigsby-m',
  'ring-a', 'hendrickson-s', 'farmer-d', 'tholt-j', 'mckay-b', 'ring-r',
]; // prettier-ignore
const USERS = ALL ? enronUsers(path.join(corpusDir(), 'enron', 'maildir')) : TWENTY;
const ARRIVALS = { 'arora-h': 2, 'allen-p': 3, 'farmer-d': 2, 'ring-r': 2 };
const CLIENT_PW = 'ring-r mailgate pw';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * An MTA of the test's own on mailgate's LMTP: one message per transaction, round the users,
 * every `gapMs`, each with its own Message-ID; a 4xx (deferred, upstream not answering) is
 * retried later, as an MTA does. stop() ends the new mail and resolves once every message got
 * a 250 (bounded: a message still deferred after `retries` rounds fails the test).
 */
function startMta(port, users, gapMs) {
  const accepted = new Map(); // Message-ID -> {user, relayed}
  const pending = [];
  const seen = { relayed: 0, saved: 0, deferred: 0 };
  let stopping = false;
  let n = 0;
  let rounds = 0;
  const body = (id, user) =>
    `From: MTA <mta@fleet.test>\r\nTo: ${user}@example.test\r\nSubject: arrival ${id}\r\n` +
    `Message-ID: <${id}@fleet.test>\r\n\r\nArrived during the migration.\r\n.\r\n`;
  const run = (async () => {
    const c = await RawLmtp.connect({ port });
    try {
      expect((await c.reply()).code).toBe(220);
      expect((await c.cmd('LHLO mta.fleet.test')).code).toBe(250);
      while (!stopping || pending.length) {
        let m;
        if (pending.length && (stopping || n % 4 === 0)) m = pending.shift();
        else m = { id: `arr-${n}`, user: users[n++ % users.length] };
        if (stopping && ++rounds > 3000) throw new Error(`still deferred: ${pending.length + 1}`);
        expect((await c.cmd('MAIL FROM:<mta@fleet.test>')).code).toBe(250);
        const r = await c.cmd(`RCPT TO:<${m.user}@example.test>`);
        let d = r;
        if (r.code === 250) {
          expect((await c.cmd('DATA')).code).toBe(354);
          c.write(body(m.id, m.user));
          d = await c.reply();
        } else await c.cmd('RSET');
        if (d.code === 250) {
          const relayed = /Relayed upstream/.test(d.text);
          seen[relayed ? 'relayed' : 'saved']++;
          accepted.set(`<${m.id}@fleet.test>`, { user: m.user, relayed });
        } else if (d.code >= 400 && d.code < 500) {
          seen.deferred++;
          pending.push(m);
        } else throw new Error(`refused: ${d.text}`);
        await sleep(gapMs);
      }
    } finally {
      c.end();
    }
  })();
  run.catch(() => {});
  return {
    accepted,
    seen,
    async stop() {
      stopping = true;
      await run;
    },
  };
}

d('a whole server migrated by two workers while mail arrives', () => {
  let db;
  let home;
  let service;
  let up;
  let lmtp;
  let imap;
  let imapPort;
  let pf;
  let env;
  let mta;
  let lmtpPort;
  const workers = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-fleet-'));
    const root = path.join(corpusDir(), 'enron', 'maildir');
    up = await startFleetDovecot(root, USERS, path.join(os.tmpdir(), 'mailgate-fleet-maildirs'), {
      lmtpPort: await freePort(),
    });
    env = {
      ...process.env,
      DATABASE_URL: db.url,
      MAILGATE_HOME: home,
      LOG_LEVEL: 'error',
      MAILGATE_IMPORT_WORKERS: '1',
      // Limits on: two accounts of the host at a time, 300 messages/s from it in all; a job
      // whose worker died is offered again after 8 s; upstream errors back off from 1 s.
      MAILGATE_MIGRATE_PER_HOST: '2',
      MAILGATE_MIGRATE_RATE: '300',
      MAILGATE_MIGRATE_EXPIRE: '8',
      MAILGATE_MIGRATE_BACKOFF: '1',
      // Six attempts span 1+2+4+8+16 = 31 s: with four (7 s) an account caught by both the
      // SIGKILL and the upstream's restart on a loaded machine once ran out of attempts.
      MAILGATE_MIGRATE_RETRIES: String(RETRIES),
      GONE_PW: 'never used',
    };
    service = await createMailService({
      knex: db.knex,
      env: { MAILGATE_HOME: home, LOG_LEVEL: 'silent' },
    });
    lmtp = createLmtpServer({ service, hostname: 'mailgate.test' });
    lmtpPort = (await lmtp.listen({ port: 0, host: '127.0.0.1' })).port;
    imap = createImapServer({ service, limits: { idlePollMs: 100 } });
    imapPort = (await imap.listen({ port: 0, host: '127.0.0.1' })).port;
    pf = await startPostfix({ lmtpPort, users: USERS });
  }, 300000);

  afterAll(async () => {
    if (mta) await mta.stop().catch(() => {});
    for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
    if (pf) await pf.stop();
    if (imap) await imap.close();
    if (lmtp) await lmtp.close({ graceMs: 1000 });
    if (service) await service.close();
    if (up) await up.inst.stop();
    if (db) await db.drop();
    if (home) fs.rmSync(home, { recursive: true, force: true });
  });

  const cli = (args) => runCli(args, { url: db.url, env });

  /** Every folder of a Dovecot account: message count and UIDVALIDITY. */
  async function upstreamFolders(a) {
    const c = new ImapFlow({
      host: up.inst.host,
      port: up.inst.port,
      secure: false,
      auth: { user: a.user, pass: a.password },
      logger: false,
    });
    c.on('error', () => {});
    await c.connect();
    try {
      const out = {};
      for (const box of await c.list()) {
        const s = await c.status(box.path, { messages: true, uidValidity: true });
        out[box.path] = { messages: s.messages, uidValidity: Number(s.uidValidity) };
      }
      return out;
    } finally {
      await c.logout().catch(() => c.close());
    }
  }

  test(
    'registered, migrated through a SIGKILL and an upstream restart, nothing lost',
    async () => {
      const accountsFile = writeAccountsFile(
        home,
        up.accounts,
        up.inst,
        `lmtp://127.0.0.1:${up.lmtpPort}`,
      );
      const before = {};
      for (const a of up.accounts) before[a.user] = await upstreamFolders(a);

      const reg = cli(['migrate', '--accounts', accountsFile, '--json']);
      expect(reg.code).toBe(0);
      const n = USERS.length;
      expect(reg.json).toMatchObject({ registered: n, queued: n, alreadyCutOver: 0 });
      const proxied = await service.users.proxied(USERS);
      expect(proxied.size).toBe(n);
      // An account whose server is gone (nothing listens on its port): JSON lines this time.
      const gone = path.join(home, 'gone.jsonl');
      const gonePort = await freePort();
      fs.writeFileSync(
      gone,
      JSON.stringify({ user: 'gone-x', host: '127.0.0.1', port: gonePort, passwordEnv: 'GONE_PW', security: 'plaintext' }) + '\n',
    ); // prettier-ignore
      expect(cli(['migrate', '--accounts', gone, '--json']).json).toMatchObject({ queued: 1 });

      // The client of ring-r (last in the queue) logs in to mailgate and flags through the proxy.
      await service.users.setPassword('ring-r', CLIENT_PW);
      const flagged = async () => {
        const c = new ImapFlow({
          host: '127.0.0.1',
          port: imapPort,
          secure: false,
          auth: { user: 'ring-r', pass: CLIENT_PW },
          logger: false,
        });
        c.on('error', () => {});
        await c.connect();
        const mb = await c.mailboxOpen('INBOX');
        await c.messageFlagsAdd('1', ['\\Flagged'], { uid: true });
        await c.logout();
        return Number(mb.uidValidity);
      };

      // Mail arrives through mailgate's LMTP from before the first worker to after the last.
      mta = startMta(lmtpPort, USERS, 100);
      const a = spawnWorker(['--concurrency', '2'], env);
      const b = spawnWorker(['--concurrency', '2', '--until-done'], env);
      workers.push(a, b);
      const flagUidValidity = await flagged();

      // Mail keeps arriving: Postfix → mailgate LMTP for accounts queued, running and done.
      for (const [user, n] of Object.entries(ARRIVALS)) {
        const sent = await smtpSource(['-m', String(n), '-f', 'ann@example.org', '-t',
        `${user}@example.test`, `127.0.0.1:${pf.smtpPort}`]); // prettier-ignore
        expect(sent.code).toBe(0);
      }

      // Kill worker a in the middle of an account it is importing.
      const aName = `${os.hostname()}:${a.pid}`;
      let victim = null;
      let mostAtOnce = 0;
      const dovecotHost = `${up.inst.host}:${up.inst.port}`;
      for (let i = 0; i < 600 && !victim; i++) {
        const st = await service.fleet.status();
        const onHost = st.running.filter((x) => x.upstream === dovecotHost).length;
        mostAtOnce = Math.max(mostAtOnce, onHost);
        const r = st.running.find((x) => x.worker === aName && x.messages > 0);
        if (r) victim = r.user;
        else await sleep(50);
      }
      expect(victim).not.toBeNull();
      // MAILGATE_MIGRATE_PER_HOST=2 over both workers' four loops (counted before the kill: a
      // killed worker's account shows `running` until it is taken again).
      expect(mostAtOnce).toBeGreaterThanOrEqual(1);
      expect(mostAtOnce).toBeLessThanOrEqual(2);
      a.kill('SIGKILL');
      expect((await a.done).signal).toBe('SIGKILL');
      const c = spawnWorker(['--concurrency', '2', '--until-done'], env);
      workers.push(c);

      // The upstream restarts once while the fleet is still moving.
      for (let i = 0; i < 600; i++) {
        const st = await service.fleet.status();
        if (st.fleet.cutover >= 5) break;
        await sleep(100);
      }
      expect((await service.fleet.status()).fleet.queued).toBeGreaterThan(0);
      await dovecot.restart(up.inst.dir);

      const [rb, rc] = await Promise.all([b.done, c.done]);
      expect(rb.code).toBe(0);
      expect(rc.code).toBe(0);
      // A few more after the last cutover (stored here), then every deferred one retried.
      await sleep(1000);
      await mta.stop();
      // Mail was relayed before cutovers, deferred around them and stored here after them.
      expect(mta.seen.relayed).toBeGreaterThan(0);
      expect(mta.seen.saved).toBeGreaterThan(0);

      // The report: the n cut over, the gone one failed with its reason and stays on proxy.
      const rep = cli(['migrate', '--report', '--json']);
      expect(rep.code).toBe(1);
      expect(rep.stderr).toMatch(
        /^MIGRATION_INCOMPLETE: 1 account\(s\) failed and stay on proxy: gone-x$/m,
      );
      expect(rep.json.failures).toEqual([
        {
          user: 'gone-x',
          upstream: `127.0.0.1:${gonePort}`,
          attempts: RETRIES,
          code: 'UPSTREAM_IMAP_FAILED',
          message: `Gave up after ${RETRIES} attempts: Upstream IMAP server 127.0.0.1:${gonePort}: ECONNREFUSED`,
        },
      ]);
      expect(await service.users.route('gone-x')).toBe('proxy');
      expect(rep.json.fleet).toMatchObject({ accounts: n + 1, cutover: n, failed: 1, queued: 0 });
      const status = cli(['migrate', '--status', '--json']);
      expect(status.json.fleet).toMatchObject({ cutover: n, failed: 1, running: 0, etaSeconds: 0 });

      // Postfix delivered everything (retried after each cutover).
      for (let i = 0; i < 300 && pf.queued() > 0; i++) {
        pf.flush();
        await sleep(200);
      }
      expect(pf.queued()).toBe(0);

      const mtaArrived = {};
      for (const x of mta.accepted.values()) mtaArrived[x.user] = (mtaArrived[x.user] || 0) + 1;
      for (const acct of up.accounts) {
        const r = rep.json.accounts.find((x) => x.user === acct.user);
        // The upstream's count at the last verification is its count now: nothing reached the
        // old server after the account's last import pass (the delivery hold).
        const after = await upstreamFolders(acct);
        const upstreamNow = Object.values(after).reduce((x, f) => x + f.messages, 0);
        expect(upstreamNow).toBeGreaterThanOrEqual(acct.messages);
        expect({ user: acct.user, ...r }).toMatchObject({
          user: acct.user,
          state: 'cutover',
          route: 'store',
          upstreamMessages: upstreamNow,
        });
        const be = await service.openBackend('pg', acct.user);
        try {
          // Every arrival of the MTA loop for this user is here exactly once.
          const ids = [];
          for await (const row of be.scanRaw('INBOX')) {
            const m = /^Message-ID: (<arr-\d+@fleet\.test>)\r?$/im.exec(row.raw.toString('latin1'));
            if (m) ids.push(m[1]);
          }
          const mine = [...mta.accepted].filter(([, x]) => x.user === acct.user).map(([id]) => id);
          expect({ user: acct.user, ids: ids.sort() }).toEqual({
            user: acct.user,
            ids: mine.sort(),
          });
          for (const [folder, u] of Object.entries(before[acct.user])) {
            const name = folder === 'INBOX' ? 'INBOX' : folder;
            const s = await be.status(name);
            const arrived =
              folder === 'INBOX' ? (ARRIVALS[acct.user] || 0) + (mtaArrived[acct.user] || 0) : 0;
            expect({ user: acct.user, folder, total: s.total }).toEqual({
              user: acct.user,
              folder,
              total: u.messages + arrived,
            });
            expect(Number(s.uidvalidity)).toBe(u.uidValidity);
          }
        } finally {
          await be.close();
        }
      }
      // The flag set through the proxy before ring-r's run is in the store, same UIDVALIDITY.
      const be = await service.openBackend('pg', 'ring-r');
      try {
        const s = await be.status('INBOX');
        expect(Number(s.uidvalidity)).toBe(flagUidValidity);
        const page = await be.scan('INBOX', { order: 'uid', limit: 1 });
        expect(page.rows[0].flags).toContain('\\Flagged');
      } finally {
        await be.close();
      }
      // The killed worker's account was finished by another one, nothing twice.
      expect(rep.json.accounts.find((x) => x.user === victim).state).toBe('cutover');
    },
    ALL ? 4 * 3600 * 1000 : 600000,
  );
});
