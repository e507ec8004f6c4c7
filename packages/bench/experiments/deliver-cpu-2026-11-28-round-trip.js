'use strict';
// Node CPU per PostgreSQL round trip through pg alone, through knex.raw, and per knex
// transaction of 4 statements (BEGIN, 2 statements, COMMIT), alternating in one process.
const W = '/work/wt-deliver/';
const pg = require(W + 'node_modules/pg');
const Knex = require(W + 'node_modules/knex');
const st = require('/tmp/dlv-deliver/prof/deliver-pg/pg.json');
const conn = { host: '127.0.0.1', port: st.port, user: 'mailgate', password: st.password, database: 'mailgate' };
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
