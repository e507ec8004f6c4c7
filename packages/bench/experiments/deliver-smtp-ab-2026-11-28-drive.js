'use strict';
// node deliver-smtp-ab-2026-11-28-drive.js PORT RCPT N PIDS: smtp-source -L (the bench's call) N messages, 1 session; CPU per message of PIDS (first: serve)
const B = require('path').resolve(__dirname, '../lib') + '/';
const { smtpSource, cpuMs } = require(B + 'deliver-clients');
(async () => {
  const [port, rcpt, n, pids] = process.argv.slice(2);
  const ps = pids.split(',').map(Number);
  const c0 = cpuMs(ps), n0 = cpuMs([ps[0]]);
  const r = await smtpSource({ port: Number(port), rcpt, sessions: 1, count: Number(n), size: 4096 });
  const c1 = cpuMs(ps), n1 = cpuMs([ps[0]]);
  console.log(JSON.stringify({ n: Number(n), perSec: n / r.seconds, cpu: (c1 - c0) / n, node: (n1 - n0) / n }));
})();
