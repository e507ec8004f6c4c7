'use strict';

/*
 * PostgreSQL killed with SIGKILL (the embedded server's postmaster, pid from
 * MAILGATE_HOME/pgdata/postmaster.pid) in the middle of an import, a flag change, an expunge
 * and an outbox drain (issue 15.6; the ES-side faults are packages/es/test/es-faults.test.js). The server
 * is restarted the way mailgate does it: the next command's EmbeddedPostgres#acquire finds
 * the postmaster gone and starts it (crash recovery from the WAL). After that: nothing lost,
 * nothing applied twice, the import resumes, the outbox drains (also by a worker that lived
 * through the crash, as in `mailgate serve`), `es verify` and `verify` are clean; and a
 * backend of the dead server still busy in a statement does not stop the restart.
 *
 * The flag change and the expunge are stopped mid-transaction deterministically: another
 * session holds an EXCLUSIVE lock on es_outbox, so the transaction has updated its messages
 * and waits on its outbox INSERT when the server dies.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const Knex = require('knex');
const { EmbeddedPostgres, MIGRATIONS_DIR } = require('@mailgate/store');
const { PgStore } = require('@mailgate/store');
const { openMirror, syncAll, verify, EsWorker, pending } = require('@mailgate/es');
const { CLI } = require('@mailgate/test-support/db');
const { describeEs } = require('@mailgate/test-support/es');
const { msg, mboxOf } = require('@mailgate/test-support/mail');

jest.setTimeout(120000);

const N = 600;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

describeEs('test/pg-faults.test.js', 'PostgreSQL SIGKILL faults', (es) => {
  // Its own embedded server in a scratch MAILGATE_HOME (not the suite's), so it can be killed.
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'mailgate-pgf-'));
  const pg = new EmbeddedPostgres(home);
  const file = path.join(home, 'list.mbox');
  let url;
  let knex;
  let store;

  const env = () => {
    const e = { ...process.env, MAILGATE_HOME: home, LOG_LEVEL: 'error' };
    delete e.DATABASE_URL;
    return {
      ...e,
      ELASTICSEARCH_URL: es.url,
      MAILGATE_ES_PREFIX: es.prefix,
      MAILGATE_BATCH_SIZE: '50',
      MAILGATE_IMPORT_WORKERS: '1',
    };
  };
  /** Runs the CLI on the scratch home (no DATABASE_URL: it acquires the embedded server). */
  const cli = (args, extra = {}) =>
    new Promise((resolve) => {
      const child = spawn(process.execPath, [CLI, ...args], {
        env: { ...env(), ...extra },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      const done = new Promise((res) =>
        child.once('exit', (code, signal) => {
          let json = null;
          try {
            json = JSON.parse(stdout.trim().split('\n').pop());
          } catch {
            json = null;
          }
          res({ code, signal, stdout, stderr, json });
        }),
      );
      resolve({ child, done, stderr: () => stderr });
    });
  const run = async (args, extra) => (await cli(args, extra)).done;

  /** A knex on the scratch server; reconnected after every restart. */
  const connect = async () => {
    if (knex) await knex.destroy();
    knex = Knex({ client: 'pg', connection: pg.url(), pool: { min: 0, max: 4 } });
    store = new PgStore(knex, { outbox: true });
  };

  async function killPostmaster() {
    const pid = pg.runningPid();
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, 'SIGKILL');
    for (let i = 0; i < 100 && pg.runningPid(); i++) await sleep(50);
    expect(pg.runningPid()).toBeNull();
  }

  /** Waits until another session waits for a lock on `table` (our fault point). */
  async function waitForLockWait(admin, table, settled) {
    for (let i = 0; i < 200; i++) {
      if (settled.done) {
        throw new Error(`finished before blocking: ${JSON.stringify(settled.value)}`);
      }
      const r = await admin.query(
        `SELECT count(*)::int AS n FROM pg_locks
          WHERE NOT granted AND relation = $1::regclass`,
        [table],
      );
      if (r.rows[0].n > 0) return;
      await sleep(50);
    }
    const act = await admin.query(
      'SELECT state, wait_event_type, wait_event, left(query, 80) AS q FROM pg_stat_activity',
    );
    throw new Error(`no statement waiting on a lock on ${table}: ${JSON.stringify(act.rows)}`);
  }

  /** Holds LOCK es_outbox EXCLUSIVE in its own session while fn runs, then kills the server. */
  async function killWhileBlocked(op) {
    const { Client } = require('pg');
    const admin = new Client({ connectionString: pg.url() });
    admin.on('error', () => {});
    await admin.connect();
    await admin.query('BEGIN');
    await admin.query('LOCK TABLE es_outbox IN EXCLUSIVE MODE');
    try {
      const settled = { done: false };
      const pending = op().then(
        (v) => ({ ok: true, v }),
        (err) => ({ ok: false, err: err.message }),
      );
      pending.then((value) => Object.assign(settled, { done: true, value }));
      await waitForLockWait(admin, 'es_outbox', settled);
      await killPostmaster();
      return await pending;
    } finally {
      await admin.end().catch(() => {});
    }
  }

  async function counts(userId) {
    const r = await knex.raw(
      `SELECT count(*)::int AS n,
              count(DISTINCT (content_hash, dup_index))::int AS k,
              count(*) FILTER (WHERE '\\Flagged' = ANY(flags))::int AS flagged,
              count(*) FILTER (WHERE expunged)::int AS expunged
         FROM messages WHERE user_id = ?`,
      [userId],
    );
    return r.rows[0];
  }

  /** The outbox drains and `es verify` finds no drift (in-process: a CLI start costs seconds). */
  async function esClean() {
    const m = openMirror({ elasticsearchUrl: es.url }, new PgStore(knex), {
      env: { MAILGATE_ES_PREFIX: es.prefix },
    });
    try {
      const s = await syncAll(m);
      expect(s.pending).toBe(0);
      const v = await verify(m);
      expect(v.users.filter((u) => !u.ok)).toEqual([]);
      expect(v.ok).toBe(true);
      return s;
    } finally {
      await m.close();
    }
  }

  /** Starts the server again as every mailgate process does (EmbeddedPostgres#acquire). */
  async function restart() {
    expect(pg.runningPid()).toBeNull();
    await pg.acquire({ persistent: true });
    expect(pg.runningPid()).toBeGreaterThan(0);
    await connect();
  }

  beforeAll(async () => {
    if (es.skipped()) return;
    const msgs = [];
    for (let i = 0; i < N; i++) {
      msgs.push(
        msg({
          subject: `[PATCH ${i}/${N}] mm: fix die_if_kernel`,
          body: `diff --git a/mm/page_${i}.c b/mm/page_${i}.c\n+\tgfp_t gfp = GFP_KERNEL;\n`.repeat(
            20,
          ),
        }),
      );
    }
    fs.writeFileSync(file, mboxOf(msgs));
    url = await pg.acquire({ persistent: true });
    const k = Knex({ client: 'pg', connection: url, migrations: { directory: MIGRATIONS_DIR } });
    await k.migrate.latest();
    await k.destroy();
    await connect();
  });

  afterAll(async () => {
    if (knex) await knex.destroy();
    if (pg.readState()) await pg.stop().catch(() => {});
    fs.rmSync(home, { recursive: true, force: true });
  });

  test('killed mid-import: the command fails with a code, the next run restarts pg and resumes', async () => {
    if (es.skipped()) return;
    const imp = await cli(['import', 'mbox', file, '--user', 'kim', '--mailbox', 'INBOX']);
    let stored = 0;
    for (let i = 0; i < 1200 && stored < 100; i++) {
      await sleep(50);
      stored = Number((await knex.raw('SELECT count(*) AS n FROM messages')).rows[0].n);
    }
    expect(stored).toBeGreaterThanOrEqual(100);
    await killPostmaster();
    const failed = await imp.done;
    // A coded error and a non-zero exit, not a hang and not a silent 0.
    expect(failed.signal).toBeNull();
    expect(failed.code).not.toBe(0);
    expect(failed.stderr).toMatch(/^[A-Z_]+: /m);

    // Started again (crash recovery from the WAL) as the next command would.
    await restart();
    const kim = await store.getUser('kim');
    // Import batches commit with synchronous_commit off (pg-store.js commitBatch): a server
    // crash may take the last batches back, never part of one; the resumed run redoes them.
    const partial = await counts(kim.id);
    expect(partial.n).toBeLessThan(N);
    expect(partial.n % 50).toBe(0);
    expect(partial.k).toBe(partial.n);
    // The import resumes: what was committed is recognised, the rest is stored once.
    const again = await run([
      'import',
      'mbox',
      file,
      '--user',
      'kim',
      '--mailbox',
      'INBOX',
      '--json',
    ]);
    expect(again.code).toBe(0);
    expect(again.json.messages).toBe(N);
    expect(again.json.imported).toBe(N - partial.n);
    expect(again.json.duplicates).toBe(partial.n);
    expect(await counts(kim.id)).toEqual({ n: N, k: N, flagged: 0, expunged: 0 });
    const v = await run(['verify', 'mbox', file, '--user', 'kim', '--mailbox', 'INBOX', '--json']);
    expect(v.json).toMatchObject({ ok: true, present: N });
    await esClean();
  });

  test('a backend still busy when the postmaster dies does not stop the next start', async () => {
    if (es.skipped()) return;
    // A CPU-bound statement (a big GIN merge, a long scan) does not notice its postmaster's
    // death and keeps the old shared memory attached; pg then refuses to start until it ends.
    const { Client } = require('pg');
    const busy = new Client({ connectionString: pg.url() });
    busy.on('error', () => {});
    await busy.connect();
    const pid = (await busy.query('SELECT pg_backend_pid() AS p')).rows[0].p;
    const long = busy.query('SELECT count(*) FROM generate_series(1, 10000000000)').catch(() => {});
    try {
      await sleep(300);
      await killPostmaster();
      expect(() => process.kill(pid, 0)).not.toThrow();
      const r = await run(['ls', '--user', 'kim', '--json']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(() => process.kill(pid, 0)).toThrow();
    } finally {
      // Never leave a CPU-bound orphan behind, whatever failed above.
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* reaped */
      }
      await long;
      await busy.end().catch(() => {});
      await connect();
    }
  });

  test('killed mid flag change: all or nothing, the retry applies once, outbox drains', async () => {
    if (es.skipped()) return;
    const kim = await store.getUser('kim');
    const mb = await store.getMailbox(kim.id, 'INBOX');
    const before = Number(mb.highestmodseq);
    const r = await killWhileBlocked(() =>
      store.setFlags(kim.id, mb.id, { query: 'gfp_kernel', add: ['\\Flagged'] }),
    );
    expect(r.ok).toBe(false);
    await restart();
    expect((await counts(kim.id)).flagged).toBe(0);
    expect(Number((await store.getMailbox(kim.id, 'INBOX')).highestmodseq)).toBe(before);
    const done = await store.setFlags(kim.id, mb.id, { query: 'gfp_kernel', add: ['\\Flagged'] });
    expect(done.changed).toHaveLength(N);
    expect(done.highestModseq).toBe(before + 1);
    expect((await counts(kim.id)).flagged).toBe(N);
    await esClean();
  });

  test('killed mid expunge, and mid outbox drain: nothing lost, nothing applied twice', async () => {
    if (es.skipped()) return;
    const kim = await store.getUser('kim');
    const mb = await store.getMailbox(kim.id, 'INBOX');
    // Uids from the store: batches lost to the crash above leave gaps, as IMAP allows.
    const uids = (
      await knex.raw('SELECT uid FROM messages WHERE user_id = ? ORDER BY uid', [kim.id])
    ).rows.map((x) => Number(x.uid));
    const gone = uids.slice(0, 100);
    await store.setFlags(kim.id, mb.id, { uids: gone, add: ['\\Deleted'] });
    const r = await killWhileBlocked(() => store.expunge(kim.id, mb.id));
    expect(r.ok).toBe(false);
    await restart();
    expect((await counts(kim.id)).expunged).toBe(0);
    const x = await store.expunge(kim.id, mb.id);
    expect(x.expunged).toEqual(gone);
    await store.purgeExpunged(kim.id, mb.id);
    expect(await counts(kim.id)).toEqual({ n: N - 100, k: N - 100, flagged: N - 100, expunged: 0 });
    await esClean();

    // Outbox drain: bulk acknowledged by ES, server killed before the drain commits; the rows
    // stay queued and the replay is refused by ES as already applied (external versions).
    await store.setFlags(kim.id, mb.id, { uids: uids.slice(150, 153), remove: ['\\Flagged'] });
    const sync = await cli(['es', 'sync', '--attempts', '1', '--json'], {
      MAILGATE_ES_SYNC_PAUSE_MS: '2000',
    });
    for (let i = 0; i < 600 && !sync.stderr().includes('bulk acknowledged'); i++) await sleep(50);
    expect(sync.stderr()).toContain('bulk acknowledged');
    await killPostmaster();
    const failed = await sync.done;
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/^[A-Z_]+: /m);
    // The next `es sync` restarts the server (EmbeddedPostgres#acquire) and replays the batch.
    const again = await run(['es', 'sync', '--json']);
    expect(again.code).toBe(0);
    expect(again.json.rows).toBe(3);
    expect(again.json.skipped).toBe(3);
    await connect();
    expect((await esClean()).rows).toBe(0);
    const v = await run(['verify', 'mbox', file, '--user', 'kim', '--mailbox', 'INBOX', '--json']);
    // Exactly the expunged messages are missing from the store; every other one is intact.
    expect(v.json).toMatchObject({ ok: false, present: N - 100, missing: 100, mismatched: 0 });
  });

  test("serve's outbox worker outlives a server crash and drains what came after", async () => {
    if (es.skipped()) return;
    // The worker keeps its own pool across the crash, as `mailgate serve` does.
    const own = Knex({ client: 'pg', connection: pg.url(), pool: { min: 0, max: 2 } });
    const m = openMirror({ elasticsearchUrl: es.url }, new PgStore(own), {
      env: { MAILGATE_ES_PREFIX: es.prefix },
    });
    const quiet = { info() {}, warn() {}, debug() {}, error() {} };
    const worker = new EsWorker({ ...m, log: quiet, intervalMs: 100 }).start();
    try {
      const kim = await store.getUser('kim');
      const mb = await store.getMailbox(kim.id, 'INBOX');
      const uids = (
        await knex.raw('SELECT uid FROM messages WHERE user_id = ? ORDER BY uid LIMIT 20', [kim.id])
      ).rows.map((x) => Number(x.uid));
      await store.setFlags(kim.id, mb.id, { uids: uids.slice(0, 10), add: ['\\Seen'] });
      await killPostmaster();
      await sleep(500);
      await restart();
      await store.setFlags(kim.id, mb.id, { uids: uids.slice(10), add: ['\\Answered'] });
      for (let i = 0; i < 600 && (await pending(store)) > 0; i++) await sleep(100);
      expect(await pending(store)).toBe(0);
    } finally {
      await worker.stop();
      await m.close();
      await own.destroy();
    }
    expect((await esClean()).rows).toBe(0);
  });
});
