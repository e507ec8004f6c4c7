'use strict';
// usage: node deliver-cpu-2026-11-28-drive-append.js [TREE] IMAPPORT USER PASS N OFFSET PIDS(comma): N corpus messages by IMAP APPEND (LITERAL+), one connection, as the bench's imap-append phase
// TREE: the mailgate checkout whose bench library is used; left out (first argument a port
// number), the repo this script lives in.
const path = require('path');
const tree = /^\d+$/.test(process.argv[2] || '')
  ? path.join(__dirname, '..', '..', '..')
  : process.argv.splice(2, 1)[0];
const B = path.resolve(tree, 'packages/bench/lib') + '/';
const fs = require('fs');
const { imapAppend, cpuMs, quantile } = require(B + 'deliver-clients');
const { RawImapClient } = require(B + 'raw-imap');
const { listMessages, messageRoot } = require(B + 'mailboxes');
const { corpusDir } = require(B + 'command-kit');
(async () => {
  const [port, user, pass, n, off, pids] = process.argv.slice(2);
  const files = listMessages(messageRoot(corpusDir()), Number(off) + Number(n)).slice(Number(off));
  const mail = files.map((f) => fs.readFileSync(f));
  const ps = pids.split(',').map(Number);
  const c = new RawImapClient({ port: Number(port) });
  await c.connect();
  await c.login(user, pass);
  const c0 = cpuMs(ps);
  const n0 = cpuMs([ps[0]]);
  const r = await imapAppend(c, 'INBOX', mail);
  const c1 = cpuMs(ps);
  const n1 = cpuMs([ps[0]]);
  await c.logout();
  console.log(
    JSON.stringify({
      n: mail.length,
      perSec: mail.length / r.seconds,
      p50: quantile(r.ms, 0.5),
      p99: quantile(r.ms, 0.99),
      cpu: (c1 - c0) / mail.length,
      node: (n1 - n0) / mail.length,
    }),
  );
})();
