'use strict';
// usage: node drive.js PORT RCPT N OFFSET PIDS(comma) [lmtp|append IMAPPORT USER PASS]
const path = require('path');
const B = '/work/wt-deliver/packages/bench/lib/';
const fs = require('fs');
const { lmtpDeliver, cpuMs, quantile } = require(B + 'deliver-clients');
const { listMessages, messageRoot } = require(B + 'mailboxes');
const { corpusDir } = require(B + 'command-kit');
(async () => {
  const [port, rcpt, n, off, pids] = process.argv.slice(2);
  const files = listMessages(messageRoot(corpusDir()), Number(off) + Number(n)).slice(Number(off));
  const mail = files.map((f) => fs.readFileSync(f));
  const ps = pids.split(',').map(Number);
  const c0 = cpuMs(ps); const n0 = cpuMs([ps[0]]);
  const r = await lmtpDeliver({ host: '127.0.0.1', port: Number(port), rcpt, sessions: 1 }, mail);
  const c1 = cpuMs(ps); const n1 = cpuMs([ps[0]]);
  console.log(JSON.stringify({ n: mail.length, perSec: mail.length / r.seconds, p50: quantile(r.ms, 0.5), p99: quantile(r.ms, 0.99), cpu: (c1 - c0) / mail.length, node: (n1 - n0) / mail.length }));
})();
