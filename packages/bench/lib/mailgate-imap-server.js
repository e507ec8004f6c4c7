'use strict';

const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const { spawn } = require('node:child_process');
const { loadConfig } = require('@mailgate/core');
// The embedded server's handle comes through the service (the store owns it; issue 31.1).
const { createMailService, EmbeddedPostgres } = require('@mailgate/service');

/*
 * mailgate's own IMAP server on the pg store, as a server of the `imap` door (imap-door.js):
 * the database path behind a real IMAP server, timed by the same raw client as Dovecot (the
 * measurement the 2003 study could not make). The built mbox is imported once per size into a
 * new user of the bench's PostgreSQL (`<work>/pg-home`, or DATABASE_URL) by the bench process;
 * the server itself runs in a child process of its own (imap-child.js: the service and IMAP
 * server `mailgate imap` runs), so that a cold sample meets a new process, as Dovecot's meets
 * a new master (issue 35 item 1). `import` is that import plus the server start. Restores after
 * an expunge un-hide the messages (the purge is off in the child, as for the pg adapter: phase
 * one of expunge is the client's answer), so uids stay the same.
 *
 * Cold (restart): the child is stopped, the bench's own connections closed, the embedded
 * PostgreSQL stopped (pg_ctl stop: its shared buffers go with it), then PostgreSQL and a new
 * child started; the runner then drops the page cache and times the first request. With
 * DATABASE_URL the database is not ours: only the process is new, and the note says so.
 */

// Sessions of one user at once: the default (4) queues a 20-client burst; raised so the
// bench's parallel clients measure the server, not the per-user gate (said in the notes).
const USER_CONCURRENCY = 32;

/** How a cold sample of this server is made (results.json `cold`). */
const COLD_HOW = {
  embedded:
    'new mailgate IMAP process (imap-child.js); embedded PostgreSQL stopped and started; page cache dropped',
  external:
    'new mailgate IMAP process (imap-child.js); DATABASE_URL server not restarted (not ours); page cache dropped',
};

/**
 * @param {{work: string, size: string, config?: object, purge?: boolean}} ctx purge: the
 *   server purges expunged rows in the background, as `mailgate imap` does (no restore then)
 * @returns {{name: string, start: Function, stop: Function, restart: Function, close: Function}}
 */
function mailgateImapServer(ctx) {
  const base = ctx.config || loadConfig();
  const home = base.databaseUrl ? base.home : path.join(ctx.work, 'pg-home');
  const env = {
    ...process.env,
    MAILGATE_HOME: home,
    MAILGATE_USER_CONCURRENCY: String(USER_CONCURRENCY),
    LOG_LEVEL: 'silent',
  };
  // The child's background purge (imap-child.js), for runs that time it (bench imap-losses).
  if (ctx.purge) env.MAILGATE_BENCH_PURGE = '1';
  // The configured database, not whatever the environment names: without it a test's
  // DATABASE_URL (ctx.config) was ignored and the server used ~/.mailgate's embedded one.
  if (base.databaseUrl) env.DATABASE_URL = base.databaseUrl;
  else delete env.DATABASE_URL;
  let service = null;
  let child = null;
  let port = null;
  let user = null;
  let password = null;
  let uids = [];

  // The bench's own service: import, restores and vacuum only (never timed).
  const openService = async () => {
    if (!service) service = await createMailService({ env, purge: false });
  };
  const closeService = async () => {
    if (service) await service.close();
    service = null;
  };
  const spawnServer = () =>
    new Promise((resolve, reject) => {
      const c = spawn(process.execPath, [path.join(__dirname, 'imap-child.js')], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      c.stderr.on('data', (d) => (err += d));
      c.stdout.on('data', (d) => {
        out += d;
        const line = out.split('\n')[0];
        if (out.includes('\n') && !port) {
          port = JSON.parse(line).port;
          child = c;
          resolve();
        }
      });
      c.on('exit', (code) => {
        if (child === c) child = null;
        if (!port) reject(new Error(`mailgate IMAP child exited (${code}): ${err.trim()}`));
      });
    });
  const killServer = async () => {
    const c = child;
    child = null;
    port = null;
    if (!c || c.exitCode !== null) return;
    const gone = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    await gone;
  };
  const endpoint = () => ({ host: '127.0.0.1', port, user: user.name, password });

  return {
    name: 'mailgate-imap',
    async start(box) {
      await openService();
      if (!user) {
        password = crypto.randomBytes(12).toString('base64url');
        const name = `bimap-${ctx.size}-${Date.now().toString(36)}`;
        user = await service.users.create(name, { password });
        await service.transfer.importMail({
          kind: 'mbox',
          paths: [box.mbox],
          user: name,
          mailbox: 'INBOX',
          workers: base.importWorkers,
          batchSize: base.batchSize,
          progress: false,
        });
        const be = await service.openBackend('pg', user);
        uids = (await be.scan('INBOX', {})).rows.map((r) => r.uid);
      } else {
        // Untimed restore: every message hidden by an expunge comes back with its uid.
        await (await service.openBackend('pg', user)).restoreExpunged('INBOX', uids);
      }
      if (!child) await spawnServer();
      return endpoint();
    },
    /** Untimed, after loading: the import's autovacuum done now, not beside timed requests. */
    async settle() {
      await openService();
      if (user) await service.vacuumUser(user.name);
    },
    async stop() {
      await killServer();
    },
    async restart() {
      await killServer();
      await closeService();
      // No client is left; stop the on-demand server even if a crashed client left its mark.
      if (!base.databaseUrl) await new EmbeddedPostgres(home).stop();
      await spawnServer();
      return {
        endpoint: endpoint(),
        how: base.databaseUrl ? COLD_HOW.external : COLD_HOW.embedded,
        note: `MAILGATE_USER_CONCURRENCY=${USER_CONCURRENCY} for the IMAP server`,
      };
    },
    async close() {
      await killServer();
      await closeService();
    },
    /**
     * The processes whose CPU a request of this server costs: the IMAP child and the embedded
     * PostgreSQL's postmaster (its backends are its children); the child alone with
     * DATABASE_URL.
     * @returns {number[]}
     */
    pids() {
      const out = child ? [child.pid] : [];
      if (!base.databaseUrl) {
        try {
          const pm = fs.readFileSync(path.join(home, 'pgdata', 'postmaster.pid'), 'utf8');
          out.push(Number(pm.split('\n')[0]));
        } catch {
          // not running: nothing to count
        }
      }
      return out;
    },
    /**
     * Waits until the server's background purge (ctx.purge) has removed every row an expunge
     * hid in the mailbox: its count of hidden rows read every 2 ms (a primary-key read).
     * @param {string} name mailbox
     * @param {number} [timeoutMs]
     */
    async purged(name, timeoutMs = 600000) {
      await openService();
      const end = Date.now() + timeoutMs;
      for (;;) {
        if ((await service.awaitingPurge(user, name)) === 0) return;
        if (Date.now() > end) throw new Error(`${name}: purge not done in ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 2));
      }
    },
  };
}

module.exports = { mailgateImapServer, USER_CONCURRENCY };
