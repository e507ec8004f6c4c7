'use strict';

/*
 * The floor under IMAP FETCH's first read of a message (issue 35, "fetch one ≤ 2× Dovecot's"):
 * one round trip to PostgreSQL, measured four ways on this machine, interleaved in one run:
 *
 *   pgbench   libpq, `-M prepared`, one connection: `SELECT 1` and the first-fetch statement
 *             (store prepared-reads, generic plan, the user's partition, a random uid per call)
 *   node-pg   node-postgres Client (the driver the prepared reads' pool uses), named statement,
 *             plan_cache_mode = force_generic_plan, the same two statements
 *
 * each over loopback TCP (127.0.0.1) and over the server's unix socket. Chunks of 500 calls,
 * the eight ways alternating, ROUNDS rounds; per-call latencies (pgbench `-l`, hrtime in Node)
 * pooled per way; medians and 10th percentiles in ms.
 *
 * Needs a PostgreSQL listening on both (the bench's embedded server started by hand with
 * `-c unix_socket_directories=DIR`), the bench's large mailbox loaded for USER_ID/MAILBOX_ID:
 *
 *   PGPASSWORD=… PGPORT=38373 PGSOCK=/tmp/fetch-sock USER_ID=8 MAILBOX_ID=8 ROUNDS=6 \
 *     nice node packages/bench/experiments/fetch-floor-2026-11-28.js > floor.json
 */

const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const { Client } = require('pg');

const PORT = Number(process.env.PGPORT || 5432);
const SOCK = process.env.PGSOCK;
const USER_ID = Number(process.env.USER_ID);
const MAILBOX_ID = Number(process.env.MAILBOX_ID);
const ROUNDS = Number(process.env.ROUNDS || 6);
const CHUNK = 500;
const MAX_UID = Number(process.env.MAX_UID || 21282);

const fetchSql = (u) => `SELECT b.id AS mb_id, b.highestmodseq AS mb_modseq,
  b.uidvalidity AS mb_uidvalidity, b.uidnext AS mb_uidnext, x.*
  FROM mailboxes b LEFT JOIN LATERAL (
    SELECT s.uid, s.raw, s.raw_codec FROM message_sources_u${USER_ID} s
     WHERE s.user_id = $1 AND s.mailbox_id = b.id AND s.uid = ANY(${u}::bigint[])
     ORDER BY s.uid) x ON true
  WHERE b.user_id = $1 AND b.id = $2`;

const pct = (a, p) => {
  const s = [...a].sort((x, y) => x - y);
  return Number(s[Math.min(s.length - 1, Math.floor(s.length * p))].toFixed(4));
};

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fetch-floor-'));
fs.writeFileSync(path.join(dir, 'select1.sql'), 'SELECT 1;\n');
fs.writeFileSync(
  path.join(dir, 'fetch.sql'),
  `\\set u random(1, ${MAX_UID})\n` +
    fetchSql('ARRAY[:u]')
      .replace(/\$1/g, String(USER_ID))
      .replace(/\$2/g, String(MAILBOX_ID))
      .replace(/\s+/g, ' ') +
    ';\n',
);

/** One pgbench chunk; per-transaction latencies from its log (microseconds, 3rd field). */
function pgbench(host, script) {
  const logDir = fs.mkdtempSync(path.join(dir, 'log-'));
  const r = spawnSync(
    'pgbench',
    ['-n', '-M', 'prepared', '-h', host, '-p', String(PORT), '-U', 'mailgate', '-t', String(CHUNK)]
      .concat(['-f', path.join(dir, `${script}.sql`), '-l', '--log-prefix', 'l', 'mailgate']),
    {
      cwd: logDir,
      encoding: 'utf8',
      env: { ...process.env, PGOPTIONS: '-c plan_cache_mode=force_generic_plan' },
    },
  );
  if (r.status !== 0) throw new Error(r.stderr);
  const out = [];
  for (const f of fs.readdirSync(logDir)) {
    for (const line of fs.readFileSync(path.join(logDir, f), 'utf8').split('\n')) {
      const p = line.split(' ');
      if (p.length > 3) out.push(Number(p[2]) / 1000);
    }
  }
  fs.rmSync(logDir, { recursive: true, force: true });
  return out;
}

async function client(host) {
  const c = new Client({
    host,
    port: PORT,
    user: 'mailgate',
    database: 'mailgate',
    options: '-c plan_cache_mode=force_generic_plan',
  });
  await c.connect();
  return c;
}

async function nodeChunk(c, script) {
  const out = [];
  for (let i = 0; i < CHUNK; i++) {
    const q =
      script === 'select1'
        ? { name: 's1', text: 'SELECT 1 AS x', values: [] }
        : {
            name: 'f1',
            text: fetchSql('$3'),
            values: [USER_ID, MAILBOX_ID, [1 + Math.floor(Math.random() * MAX_UID)]],
          };
    const t0 = process.hrtime.bigint();
    const r = await c.query(q);
    out.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (!r.rows.length) throw new Error('no row');
  }
  return out;
}

async function main() {
  const hosts = { tcp: '127.0.0.1', unix: SOCK };
  const clients = { tcp: await client(hosts.tcp), unix: await client(hosts.unix) };
  const t = {};
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const script of ['select1', 'fetch']) {
        for (const via of round % 2 ? ['unix', 'tcp'] : ['tcp', 'unix']) {
          const a = `pgbench ${script} ${via}`;
          const b = `node-pg ${script} ${via}`;
          (t[a] = t[a] || []).push(...pgbench(hosts[via], script));
          (t[b] = t[b] || []).push(...(await nodeChunk(clients[via], script)));
        }
      }
    }
  } finally {
    await clients.tcp.end();
    await clients.unix.end();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const results = {};
  for (const [k, v] of Object.entries(t)) {
    results[k] = { n: v.length, median: pct(v, 0.5), p10: pct(v, 0.1), p90: pct(v, 0.9) };
  }
  const load = os.loadavg();
  process.stdout.write(
    JSON.stringify({ when: new Date().toISOString(), load, rounds: ROUNDS, results }, null, 2) +
      '\n',
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
