'use strict';

/*
 * A/B of two running mailgate IMAP servers (bench lib/imap-child.js, e.g. one on TCP and one on
 * the unix socket of the same PostgreSQL, or the old and the new code): `UID FETCH n
 * (BODY.PEEK[])` of messages never fetched by either, the two servers alternating per message
 * (which goes first alternates too); wall medians at the client and the server process's CPU
 * per fetch (/proc/<pid>/stat utime+stime, 10 ms ticks). LOGIN as FETCH_USER / FETCH_PASSWORD.
 *
 *   nice node packages/bench/experiments/fetch-ab-2026-11-28.js PORT_A PID_A PORT_B PID_B FIRST_UID N
 *
 * uids FIRST_UID + 2i (+1 for B), i < N: give each run a fresh range (the body cache keeps
 * what was fetched).
 */
const fs = require('fs');
const { RawClient } = require('../../imap/test/raw-client');
const [pa, pidA, pb, pidB] = process.argv.slice(2, 6).map(Number);
const start = Number(process.argv[6] || 1);
const n = Number(process.argv[7] || 600);
const ticks = (pid) => { const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return Number(f[11]) + Number(f[12]); };
const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[s.length >> 1]; };
(async () => {
  const cs = [await RawClient.connect(pa), await RawClient.connect(pb)];
  for (const c of cs) { await c.cmd('a', `LOGIN ${process.env.FETCH_USER} ${process.env.FETCH_PASSWORD}`); await c.cmd('b', 'SELECT INBOX'); }
  const t = [[], []]; const cpu = [0, 0]; const pids = [pidA, pidB];
  for (let i = 0; i < n; i++) {
    for (const k of i % 2 ? [1, 0] : [0, 1]) {
      const uid = start + i * 2 + k;
      const c0 = ticks(pids[k]);
      const t0 = process.hrtime.bigint();
      await cs[k].cmd('f' + i, `UID FETCH ${uid} (BODY.PEEK[])`);
      t[k].push(Number(process.hrtime.bigint() - t0) / 1e6);
      cpu[k] += ticks(pids[k]) - c0;
    }
  }
  console.log(JSON.stringify({ n, A: { median: med(t[0]), cpuMsPerFetch: (cpu[0] * 10) / n }, B: { median: med(t[1]), cpuMsPerFetch: (cpu[1] * 10) / n } }));
  for (const c of cs) c.close();
})();
