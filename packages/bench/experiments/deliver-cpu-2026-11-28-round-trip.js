'use strict';
// Node CPU per PostgreSQL round trip through pg alone, through knex.raw, and per knex
// transaction of 4 statements (BEGIN, 2 statements, COMMIT), alternating in one process.
// usage: node deliver-cpu-2026-11-28-round-trip.js [TREE [MAILGATE_HOME]]
// TREE: the mailgate checkout whose pg and knex are used (default: the repo this script lives in);
// MAILGATE_HOME: the embedded PostgreSQL to talk to (its pg.json; default: the bench's
// /tmp/dlv-deliver/prof/deliver-pg of the README's command, running).
const path = require('path');
const W = path.resolve(process.argv[2] || path.join(__dirname, '..', '..', '..'));
const pg = require(path.join(W, 'node_modules/pg'));
const Knex = require(path.join(W, 'node_modules/knex'));
const st = require(path.resolve(process.argv[3] || '/tmp/dlv-deliver/prof/deliver-pg', 'pg.json'));
const conn = {
  host: '127.0.0.1',
  port: st.port,
  user: 'mailgate',
  password: st.password,
  database: 'mailgate',
};
(async () => {
  const N = 2000;
  const c = new pg.Client(conn);
  await c.connect();
  const knex = Knex({ client: 'pg', connection: conn, pool: { min: 1, max: 1 } });
  const cases = {
    'pg query': () => c.query('SELECT $1::int AS x', [1]),
    'knex.raw': () => knex.raw('SELECT ?::int AS x', [1]),
    'knex trx (BEGIN, 2 statements, COMMIT)': () =>
      knex.transaction(async (t) => {
        await t.raw('SELECT ?::int AS x', [1]);
        await t.raw('SELECT ?::int AS x', [2]);
      }),
  };
  const out = {};
  for (let round = 0; round < 4; round++) {
    for (const [name, fn] of Object.entries(cases)) {
      for (let i = 0; i < 200; i++) await fn();
      const u0 = process.cpuUsage();
      for (let i = 0; i < N; i++) await fn();
      const u = process.cpuUsage(u0);
      (out[name] ??= []).push(+((u.user + u.system) / N).toFixed(1));
    }
  }
  console.log(JSON.stringify({ unit: 'node CPU µs per call', N, rounds: out }, null, 1));
  await c.end();
  await knex.destroy();
})();
