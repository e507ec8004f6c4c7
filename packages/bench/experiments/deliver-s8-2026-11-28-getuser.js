'use strict';
// usage: DATABASE_URL=... node deliver-s8-2026-11-28-getuser.js: Node and PostgreSQL CPU of the RCPT user lookup, knex vs the prepared read, 4 alternating rounds of 2,000 after 300
// (user bob, postmaster pid from /tmp/deliver-h/pgdata; the tree is /work/wt-deliver as it ran).
const W = '/work/wt-deliver';
const { cpuMs } = require('/work/wt-deliver/packages/bench/lib/deliver-clients'); const PGP = Number(require('fs').readFileSync('/tmp/deliver-h/pgdata/postmaster.pid','utf8').split('\n')[0]);
const { PgStore } = require(W + '/packages/store');
const knex = require(W + '/node_modules/knex')({ client: 'pg', connection: process.env.DATABASE_URL, pool: { min: 1, max: 4 } });
(async () => {
  const store = new PgStore(knex, {});
  const { preparedOf } = require(W + '/packages/store/lib/prepared-reads');
  const pr = preparedOf(store);
  const a = () => store.getUser('bob');
  const b = async () => (await pr.rows('mg_user_by_name', 'SELECT * FROM users WHERE name = $1', ['bob']))[0];
  for (let r = 0; r < 4; r++)
    for (const [n, f] of [['knex', a], ['prepared', b]]) {
      for (let i = 0; i < 300; i++) await f();
      const u0 = process.cpuUsage(); const p0 = cpuMs([PGP]);
      for (let i = 0; i < 2000; i++) await f();
      const u = process.cpuUsage(u0);
      console.log(n, ((u.user + u.system) / 2000).toFixed(1), 'us node', ((cpuMs([PGP]) - p0) / 2).toFixed(1), 'us pg');
    }
  await pr.close(); await knex.destroy();
})();
