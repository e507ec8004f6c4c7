'use strict';

/*
 * A/B of re-SELECT on two running mailgate IMAP servers (bench lib/imap-child.js: the old and
 * the new code on the same PostgreSQL): each session SELECTs INBOX once, then `SELECT INBOX`
 * again N times per server, the servers alternating per command; wall medians at the client and
 * the server process's CPU per re-SELECT (/proc/<pid>/stat utime+stime, 10 ms ticks). LOGIN as
 * FETCH_USER / FETCH_PASSWORD.
 *
 *   nice node packages/bench/experiments/reselect-ab-2026-11-28.js PORT_A PID_A PORT_B PID_B N
 */

const fs = require('fs');
const { RawClient } = require('../../imap/test/raw-client');

const [pa, pidA, pb, pidB] = process.argv.slice(2, 6).map(Number);
const n = Number(process.argv[6] || 500);
const ticks = (pid) => {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(f[11]) + Number(f[12]);
};
const med = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];

(async () => {
  const cs = [await RawClient.connect(pa), await RawClient.connect(pb)];
  try {
    for (const c of cs) {
      await c.cmd('a', `LOGIN ${process.env.FETCH_USER} ${process.env.FETCH_PASSWORD}`);
      await c.cmd('b', 'SELECT INBOX');
    }
    const t = [[], []];
    const cpu = [0, 0];
    const pids = [pidA, pidB];
    for (let i = 0; i < n; i++) {
      for (const k of i % 2 ? [1, 0] : [0, 1]) {
        const c0 = ticks(pids[k]);
        const t0 = process.hrtime.bigint();
        await cs[k].cmd(`s${i}`, 'SELECT INBOX');
        t[k].push(Number(process.hrtime.bigint() - t0) / 1e6);
        cpu[k] += ticks(pids[k]) - c0;
      }
    }
    const side = (k) => ({ median: med(t[k]), cpuMsPerReselect: (cpu[k] * 10) / n });
    process.stdout.write(JSON.stringify({ n, A: side(0), B: side(1) }) + '\n');
  } finally {
    for (const c of cs) c.close();
  }
})();
