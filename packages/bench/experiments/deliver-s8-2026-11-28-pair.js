'use strict';
// usage: node deliver-s8-2026-11-28-pair.js TREE_BENCH RCPT ROUNDS BLOCK OFFSET A:PORT:PID B:PORT:PID ...
// Two (or more) warm `serve` processes on one PostgreSQL, driven in alternating blocks of BLOCK corpus
// deliveries (the bench's LMTP client, 1 session), ROUNDS rounds, the order of the sides reversed every
// other round: each side's CPU (its serve process; the postmaster's tree while its block runs) per
// delivery. The sides see the same machine load, block by block, so their ratio holds on a busy machine.
const path = require('path');
const fs = require('fs');
const B = path.resolve(process.argv[2], 'packages/bench/lib') + '/';
const { lmtpDeliver, cpuMs } = require(B + 'deliver-clients');
const { listMessages, messageRoot } = require(B + 'mailboxes');
const { corpusDir } = require(B + 'command-kit');
(async () => {
  const [, , , rcpt, rounds, block, off, ...sides] = process.argv;
  const pgp = Number(fs.readFileSync(process.env.PGDATA_PID || '/tmp/deliver-h/pgdata/postmaster.pid', 'utf8').split('\n')[0]);
  const n = Number(block);
  const files = listMessages(messageRoot(corpusDir()), Number(off) + n * 8).slice(Number(off));
  const mail = files.map((f) => fs.readFileSync(f));
  const s = sides.map((x) => {
    const [label, port, pid] = x.split(':');
    return { label, port: Number(port), pid: Number(pid), serve: 0, pg: 0, n: 0, ms: [] };
  });
  for (let r = 0; r < Number(rounds); r++) {
    const order = r % 2 ? [...s].reverse() : s;
    for (const side of order) {
      const batch = mail.slice(((r * s.length + s.indexOf(side)) % 8) * n).slice(0, n);
      const c0 = cpuMs([side.pid]);
      const p0 = cpuMs([pgp]);
      const res = await lmtpDeliver({ host: '127.0.0.1', port: side.port, rcpt, sessions: 1 }, batch);
      side.serve += cpuMs([side.pid]) - c0;
      side.pg += cpuMs([pgp]) - p0;
      side.n += batch.length;
      side.ms.push(...res.ms);
    }
  }
  for (const x of s) {
    const ms = x.ms.sort((a, b) => a - b);
    console.log(JSON.stringify({ label: x.label, n: x.n, serveMs: +(x.serve / x.n).toFixed(3), pgMs: +(x.pg / x.n).toFixed(3), totalMs: +((x.serve + x.pg) / x.n).toFixed(3), p50: +ms[Math.floor(ms.length / 2)].toFixed(2) }));
  }
})();
