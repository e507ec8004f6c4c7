'use strict';

/*
 * Issue 34.2: on a Citus cluster (a coordinator and two workers, scripts/citus/citus.sh) every
 * per-user store operation is a router query: each statement it sends is planned as ONE task on
 * the ONE worker that holds the user's shards. Each operation runs with the knex 'query' event
 * recording its statements; every recorded statement is then EXPLAINed (FORMAT JSON) and its
 * Citus plan read: every "Task Count" is 1 and every task runs on the user's worker. The same
 * operations also run with `citus.multi_task_query_log_level = error`, so a statement that
 * fanned out over several shards would fail the operation itself (this also covers the
 * statements sent on a raw connection, which the 'query' event does not see).
 * Cross-user operations (admin listing, outbox, purge queue) are named and checked to be
 * bounded (a LIMIT, or one row per user).
 */

const os = require('node:os');
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const Knex = require('knex');
const { PgStore, byName } = require('@mailgate/store');
const { isCitus } = require('@mailgate/store/citus');
const { deriveRow } = require('@mailgate/importer');
const { msg, importMessages } = require('@mailgate/test-support/mail');
const { describeCitus, createMigratedCitusDatabase } = require('@mailgate/test-support/citus');

const run = describeCitus(__filename);

/** Every distributed-plan node of an EXPLAIN (FORMAT JSON) result: [{tasks, nodes}]. */
function citusJobs(plan) {
  const jobs = [];
  const walk = (n) => {
    if (!n || typeof n !== 'object') return;
    if (Array.isArray(n)) return n.forEach(walk);
    if (n['Distributed Query'] && n['Distributed Query'].Job) {
      const job = n['Distributed Query'].Job;
      const nodes = (job.Tasks || []).map((t) => t.Node);
      jobs.push({ tasks: job['Task Count'], nodes });
    }
    for (const v of Object.values(n)) walk(v);
  };
  walk(plan);
  return jobs;
}

/** sql with each $n replaced by its value as a literal (the statement casts where it matters). */
function inline(sql, bindings) {
  const { prepareValue } = require('pg/lib/utils');
  const { escapeLiteral } = require('pg');
  return sql.replace(/\$(\d+)/g, (_, n) => {
    const v = prepareValue(bindings[Number(n) - 1]);
    return v === null ? 'NULL' : escapeLiteral(String(v));
  });
}

run('Citus: every per-user store operation is a router query (issue 34.2)', () => {
  const name = `mgt_citus_${crypto.randomBytes(4).toString('hex')}`;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mailgate-citus-router-'));
  let cluster;
  let knex;
  let store;
  let ann;
  let ben;
  let inbox;
  let annWorker;
  let coordinatorPort;
  const recorded = [];

  beforeAll(async () => {
    ({ cluster, knex } = await createMigratedCitusDatabase(name, {
      pool: {
        min: 0,
        max: 4,
        // A statement that fans out over several shards fails the operation that sent it.
        afterCreate: (conn, done) =>
          conn.query("SET citus.multi_task_query_log_level = 'error'", (err) => done(err, conn)),
      },
    }));
    store = new PgStore(knex, { outbox: true });
    const messages = [];
    for (let i = 1; i <= 30; i++) {
      messages.push(
        msg({
          subject: i % 3 ? `Quarterly report ${i}` : `Re: Quarterly report ${i - 1}`,
          from: `Ann Example <ann${i % 4}@example.com>`,
          body: `Body ${i} happy words\n${i % 5 === 0 ? 'rare-token-xyzzy\n' : ''}`,
          date: new Date(Date.UTC(2024, 0, 1 + i)).toUTCString(),
        }),
      );
    }
    await importMessages(store, path.join(tmp, 'ann.mbox'), {
      messages,
      user: 'ann',
      mailbox: 'INBOX',
    });
    await importMessages(store, path.join(tmp, 'ben.mbox'), {
      messages: messages.slice(0, 10),
      user: 'ben',
      mailbox: 'INBOX',
    });
    ann = await store.getUser('ann');
    ben = await store.getUser('ben');
    inbox = (await store.getMailbox(ann.id, 'INBOX')).id;
    const w = await knex.raw(
      `SELECT nodename || ':' || nodeport AS node FROM pg_dist_shard_placement
        WHERE shardid = get_shard_id_for_distribution_column('messages', ?::int)`,
      [ann.id],
    );
    annWorker = w.rows[0].node;
    coordinatorPort = new URL(cluster.url).port;
    knex.on('query', (q) => recorded.push({ sql: q.sql, bindings: q.bindings || [] }));
  });

  afterAll(async () => {
    if (store) await store.settleBackground();
    if (knex) await knex.destroy();
    if (cluster) await cluster.drop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('the schema is distributed by user_id, co-located, users and tokens replicated', async () => {
    expect(await isCitus(knex)).toBe(true);
    const r = await knex.raw(
      `SELECT logicalrelid::regclass::text AS t, partmethod, colocationid,
              column_to_column_name(logicalrelid, partkey) AS col
         FROM pg_dist_partition ORDER BY 1`,
    );
    const byTable = Object.fromEntries(r.rows.map((x) => [x.t, x]));
    expect(byTable.users.partmethod).toBe('n');
    expect(byTable.api_tokens.partmethod).toBe('n');
    const dist = r.rows.filter((x) => x.partmethod === 'h');
    for (const t of ['mailboxes', 'messages', 'message_sources', 'message_words', 'es_outbox']) {
      expect(byTable[t]).toMatchObject({ partmethod: 'h', col: 'user_id' });
    }
    expect(new Set(dist.map((x) => x.colocationid)).size).toBe(1);
    // Rows of two users may share a shard, but never leave their user's shard group.
    const nodes = await knex.raw(
      `SELECT count(DISTINCT nodeport)::int AS n FROM pg_dist_node WHERE groupid > 0`,
    );
    expect(nodes.rows[0].n).toBe(2);
  });

  /**
   * Runs op with the statements recorded, then checks each one's plan. With `steps`, a
   * statement may also have tasks on the coordinator: Citus runs a writable CTE chain as
   * single-shard steps on the user's worker whose results a last step on the coordinator
   * reads (the purge's and the append's one statement); no task ever goes to another worker.
   */
  async function routed(label, op, { steps = false } = {}) {
    recorded.length = 0;
    const result = await op();
    const statements = recorded.filter((s) =>
      /^\s*(select|insert|update|delete|with)\b/i.test(s.sql),
    );
    expect(statements.length).toBeGreaterThan(0);
    const conn = await knex.client.acquireConnection();
    try {
      for (const s of statements) {
        let plan;
        try {
          plan = (await conn.query(`EXPLAIN (FORMAT JSON) ${s.sql}`, s.bindings)).rows[0];
        } catch (err) {
          // Citus cannot EXPLAIN an INSERT ... SELECT with parameters ("could not create
          // distributed plan"; executing it works): explain it with the values written in.
          if (!/could not create distributed plan/.test(err.message)) throw err;
          plan = (await conn.query(`EXPLAIN (FORMAT JSON) ${inline(s.sql, s.bindings)}`)).rows[0];
        }
        for (const job of citusJobs(plan['QUERY PLAN'])) {
          const where = `${label}: ${s.sql.slice(0, 160)}`;
          expect({ where, tasks: job.tasks }).toEqual({ where, tasks: 1 });
          for (const node of job.nodes) {
            // Reference tables answer from any node; the user's tables from the user's worker.
            if (/pg_catalog|users|api_tokens/.test(s.sql) && !/messages|mailboxes/.test(s.sql))
              continue;
            if (steps && node.includes(`port=${coordinatorPort}`)) continue;
            expect({ where, node }).toEqual({
              where,
              node: expect.stringContaining(`port=${annWorker.split(':')[1]}`),
            });
          }
        }
      }
    } finally {
      await knex.client.releaseConnection(conn);
    }
    return result;
  }

  test('list view, header scan and fetch', async () => {
    const page = await routed('scanPage', () => store.scanPage(ann.id, inbox, { limit: 10 }));
    expect(page.rows || page).toBeTruthy();
    const list = await routed('scanList', () => store.scanList(ann.id, inbox));
    expect(list).toHaveLength(30);
    const headers = await routed('scanHeaders', () => store.scanHeaders(ann.id, inbox));
    expect(headers).toHaveLength(30);
    const m = await routed('getMessage', () => store.getMessage(ann.id, inbox, headers[0].uid));
    expect(m).toBeTruthy();
    await routed('listMailboxes', () => store.listMailboxes(ann.id));
  });

  test.each([
    ['word', 'happy', 30],
    ['phrase', '"happy words"', 30],
    ['rare word', 'rare-token-xyzzy', 6],
    ['substring', 'text:xyzz', 6],
    ['from', 'from:ann1@example.com', 8],
    ['subject', 'subject:quarterly', 30],
    ['date', 'after:2024-01-20', 12],
    ['flag', 'is:unread', 30],
    ['combined', 'happy -from:ann0@example.com', 23],
  ])('search of kind %s', async (label, q, total) => {
    const r = await routed(`search ${label}`, () => store.search(ann.id, q, { mailboxId: inbox }));
    expect(r.total).toBe(total);
    await routed(`search all ${label}`, () => store.search(ann.id, q));
  });

  test('flag change, expunge, append, threads, changes', async () => {
    const before = await store.getMailbox(ann.id, 'INBOX');
    const uids = (await store.scanHeaders(ann.id, inbox)).map((r) => r.uid);
    await routed('setFlags', () =>
      store.setFlags(ann.id, inbox, { uids: uids.slice(0, 3), add: ['\\Seen', '\\Deleted'] }),
    );
    const gone = await routed('expunge', () => store.expunge(ann.id, inbox, {}));
    expect(gone.expunged).toEqual(uids.slice(0, 3));
    const raw = msg({ subject: 'Appended on Citus', body: 'appended body\n' });
    const d = deriveRow(raw);
    const added = await routed(
      'appendMessage',
      () => store.appendMessage(ann.id, byName('INBOX'), { raw, row: d.row }),
      { steps: true },
    );
    expect(added.uid).toBeGreaterThan(uids[uids.length - 1]);
    const threads = await routed('listThreads', () =>
      store.listThreads(ann.id, { mailboxId: inbox }),
    );
    expect(threads.threads.length).toBeGreaterThan(0);
    await routed('threadMessages', () => store.threadMessages(ann.id, threads.threads[0].threadId));
    const changes = await routed('changesSince', () =>
      store.changesSince(ann.id, inbox, Number(before.highestmodseq)),
    );
    expect(changes.expunged || changes.vanished || changes).toBeTruthy();
    await routed('purgeExpunged', () => store.purgeExpunged(ann.id, inbox), { steps: true });
    // ben's mail is untouched by all of ann's operations.
    expect((await store.search(ben.id, 'happy')).total).toBe(10);
  });

  test("the ES mirror's reads of one user", async () => {
    const keys = (await store.scanHeaders(ann.id, inbox))
      .slice(0, 3)
      .map((r) => ({ mailboxId: inbox, uid: r.uid }));
    const rows = await routed('mirrorRows', () => store.mirrorRows(ann.id, keys));
    expect(rows).toHaveLength(3);
    expect(rows[0].lexemes.length).toBeGreaterThan(0);
    const page = await routed('mirrorPage', () => store.mirrorPage(ann.id, null, 10));
    expect(page).toHaveLength(10);
  });

  test('cross-user operations are named and bounded', async () => {
    // The only statements that span users: listing users (admin), the outbox drain (LIMIT,
    // id order) and its count. They run with the multi-task guard off.
    await knex.transaction(async (trx) => {
      await trx.raw("SET LOCAL citus.multi_task_query_log_level = 'off'");
      const users = await trx.raw('SELECT id FROM users ORDER BY id');
      expect(users.rows.length).toBe(2);
    });
    const guardOff = Knex({ client: 'pg', connection: cluster.url, pool: { min: 0, max: 2 } });
    try {
      const s = new PgStore(guardOff, { outbox: true });
      expect((await s.listUsers()).map((u) => u.name).sort()).toEqual(['ann', 'ben']);
      expect(await s.outboxPending()).toBeGreaterThan(0);
      let seen = 0;
      const step = await s.drainOutbox(25, async (rows) => {
        seen = rows.length;
        return {};
      });
      expect(step.rows).toBe(25);
      expect(seen).toBe(25);
    } finally {
      await guardOff.destroy();
    }
  });
});
