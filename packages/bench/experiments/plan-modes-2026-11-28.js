'use strict';

/*
 * How PostgreSQL 17 plans IMAP FETCH's read of message bytes (store sourcesWithMailbox `hidden`,
 * the first fetch of a message), per call, through node-postgres on loopback, interleaved:
 *
 *   plain           unnamed statement on the partitioned parent (what knex sends): planned per call
 *   named           named statement, plan_cache_mode auto: PostgreSQL keeps making custom plans
 *   generic         named, session plan_cache_mode = force_generic_plan, on the parent
 *   directGeneric   named, force_generic_plan, on the user's own partition (message_sources_u<id>):
 *                   what store lib/prepared-reads.js sends
 *
 * Part 1 (`real`): the bench's database (PGURL) and one of its users (USER_ID), 2,000 calls each.
 * Part 2 (`synthetic`): a scratch database `fetch_scale` on the same server with a bare
 * LIST-partitioned table of 5, 100 and 1,000 partitions (50 rows of 4 KB each), 20 users in
 * turn, 1,000 calls each: how a generic plan on the parent scales with the number of users.
 *
 *   PGURL=postgres://… USER_ID=5 flock -x /work/coord/cpu.lock nice \
 *     node packages/bench/experiments/plan-modes-2026-11-28.js
 */

const { Client } = require('pg');

const GENERIC = { options: '-c plan_cache_mode=force_generic_plan' };

const lateral = (mb, table) => `SELECT b.id AS mb_id, b.uidnext AS mb_uidnext, x.*
       FROM ${mb} b LEFT JOIN LATERAL (SELECT s.uid, s.raw FROM ${table} s
      WHERE s.user_id = $1 AND s.mailbox_id = b.id AND s.uid = ANY($2::bigint[])
      ORDER BY s.uid) x ON true
      WHERE b.user_id = $1 AND b.name = $3`;

const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s[s.length >> 1];
};

async function connect(url, opts = {}) {
  const c = new Client({ connectionString: url, ...opts });
  await c.connect();
  return c;
}

/** Times each variant `n` times, interleaved; variants: name → {client, query(i)}. */
async function timeVariants(variants, n) {
  const t = {};
  for (const k of Object.keys(variants)) t[k] = [];
  for (let i = 0; i < n; i++) {
    for (const [k, v] of Object.entries(variants)) {
      const q = v.query(i);
      const t0 = process.hrtime.bigint();
      const r = await v.client.query(q);
      t[k].push(Number(process.hrtime.bigint() - t0) / 1e6);
      if (!r.rows.length || !r.rows[0].raw) throw new Error(`no row: ${k}`);
    }
  }
  const out = {};
  for (const k of Object.keys(t)) out[k] = Number(median(t[k]).toFixed(3));
  return out;
}

async function real(url, user) {
  const c = {
    plain: await connect(url),
    named: await connect(url),
    generic: await connect(url, GENERIC),
    directGeneric: await connect(url, GENERIC),
  };
  try {
    const r = await c.plain.query(
      'SELECT max(uid)::int AS n, count(*)::int AS m FROM message_sources WHERE user_id = $1',
      [user],
    );
    const parts = await c.plain.query(
      "SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'message_sources'::regclass",
    );
    const n = r.rows[0].n;
    const parent = lateral('mailboxes', 'message_sources');
    const direct = lateral('mailboxes', `message_sources_u${Number(user)}`);
    const values = (i) => [user, [1 + ((i * 7919) % n)], 'INBOX'];
    const medians = await timeVariants(
      {
        plain: { client: c.plain, query: (i) => ({ text: parent, values: values(i) }) },
        named: { client: c.named, query: (i) => ({ name: 'p', text: parent, values: values(i) }) },
        generic: {
          client: c.generic,
          query: (i) => ({ name: 'p', text: parent, values: values(i) }),
        },
        directGeneric: {
          client: c.directGeneric,
          query: (i) => ({ name: 'd', text: direct, values: values(i) }),
        },
      },
      2000,
    );
    const plans = {};
    for (const k of ['named', 'generic', 'directGeneric']) {
      const p = await c[k].query('SELECT generic_plans, custom_plans FROM pg_prepared_statements');
      plans[k] = p.rows[0];
    }
    const explain = await c.directGeneric.query(
      `EXPLAIN (ANALYZE, COSTS OFF) EXECUTE d(${Number(user)}, '{7}', 'INBOX')`,
    );
    const explainParent = await c.generic.query(
      `EXPLAIN (ANALYZE, COSTS OFF) EXECUTE p(${Number(user)}, '{7}', 'INBOX')`,
    );
    return {
      user,
      messages: r.rows[0].m,
      partitions: parts.rows[0].n,
      calls: 2000,
      medianMs: medians,
      plans,
      explainDirectGeneric: explain.rows.map((x) => x['QUERY PLAN']),
      explainParentGeneric: explainParent.rows.map((x) => x['QUERY PLAN']),
    };
  } finally {
    for (const x of Object.values(c)) await x.end();
  }
}

async function synthetic(base, partitions) {
  const admin = await connect(base);
  await admin.query('DROP DATABASE IF EXISTS fetch_scale');
  await admin.query('CREATE DATABASE fetch_scale');
  await admin.end();
  const u = new URL(base);
  u.pathname = '/fetch_scale';
  const url = u.toString();
  try {
    const s = await connect(url);
    await s.query('CREATE TABLE mb (id serial PRIMARY KEY, user_id int, name text, uidnext bigint)');
    await s.query(`CREATE TABLE ms (user_id int NOT NULL, mailbox_id int NOT NULL,
      uid bigint NOT NULL, raw bytea, PRIMARY KEY (user_id, mailbox_id, uid))
      PARTITION BY LIST (user_id)`);
    for (let i = 1; i <= partitions; i++) {
      await s.query(`CREATE TABLE ms_u${i} PARTITION OF ms FOR VALUES IN (${i})`);
    }
    await s.query(
      "INSERT INTO mb (user_id, name, uidnext) SELECT g, 'INBOX', 100 FROM generate_series(1, $1) g",
      [partitions],
    );
    await s.query(
      "INSERT INTO ms SELECT b.user_id, b.id, u, repeat('x', 4000)::bytea FROM mb b, generate_series(1, 50) u",
    );
    await s.query('ANALYZE');
    await s.end();
    const c = {
      plain: await connect(url),
      named: await connect(url),
      generic: await connect(url, GENERIC),
      directGeneric: await connect(url, GENERIC),
    };
    try {
      const parent = lateral('mb', 'ms');
      const userOf = (i) => 1 + ((i * 31) % Math.min(partitions, 20));
      const values = (i) => [userOf(i), [1 + (i % 50)], 'INBOX'];
      const medians = await timeVariants(
        {
          plain: { client: c.plain, query: (i) => ({ text: parent, values: values(i) }) },
          named: {
            client: c.named,
            query: (i) => ({ name: 'p', text: parent, values: values(i) }),
          },
          generic: {
            client: c.generic,
            query: (i) => ({ name: 'p', text: parent, values: values(i) }),
          },
          directGeneric: {
            client: c.directGeneric,
            query: (i) => ({
              name: `d${userOf(i)}`,
              text: lateral('mb', `ms_u${userOf(i)}`),
              values: values(i),
            }),
          },
        },
        1000,
      );
      return { partitions, users: Math.min(partitions, 20), calls: 1000, medianMs: medians };
    } finally {
      for (const x of Object.values(c)) await x.end();
    }
  } finally {
    const admin2 = await connect(base);
    await admin2.query('DROP DATABASE IF EXISTS fetch_scale');
    await admin2.end();
  }
}

(async () => {
  const url = process.env.PGURL;
  const user = Number(process.env.USER_ID || 1);
  const out = { when: new Date().toISOString(), loadavg: require('node:os').loadavg() };
  out.real = await real(url, user);
  out.synthetic = [];
  for (const p of [5, 100, 1000]) out.synthetic.push(await synthetic(url, p));
  out.loadavgAfter = require('node:os').loadavg();
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
})().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
