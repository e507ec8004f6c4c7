'use strict';
// Cold probe of the warm-up (issue 35.3, bench/results/imap-cold-listview-2026-11-28-s8): as
// listview-cold-2026-11-28.js (each sample a new imap-child.js of TREE on HOME, every home's
// PostgreSQL stopped first, page cache dropped, LOGIN + SELECT untimed, the FETCH timed by the
// bench's raw client), plus startMs: spawn to the child's port line (the embedded PostgreSQL's
// start and the warm-up included). The port line is found among other stdout lines
// (NODEARGS=--trace-gc adds some). cpuPg counts every process of user postgres (other
// engineers' PostgreSQL too when they run). PROF=DIR adds --cpu-prof. As root.
//   node listview-warm-2026-11-28.js x USER PASS headers_list|headers PAIRS TREE@HOME [TREE@HOME …]
const fs = require('node:fs');
const path = require('node:path');
const { spawn, execSync } = require('node:child_process');
const [, user, pass, request, pairs, ...specs] = process.argv.slice(2);
const trees = specs.map((x) => x.split('@')[0]);
const homes = specs.map((x) => x.split('@')[1]);
const { RawImapClient } = require(path.join(trees[0], 'packages/bench/lib/raw-imap.js'));
const { EmbeddedPostgres } = require(path.join(trees[0], 'node_modules/@mailgate/service'));
const CMD = {
  headers: 'UID FETCH 1:* (UID FLAGS INTERNALDATE RFC822.SIZE ENVELOPE)',
  headers_list: 'FETCH 1:* (BODY.PEEK[HEADER.FIELDS (FROM TO SUBJECT DATE)] FLAGS RFC822.SIZE)',
}[request];
const ticks = (pid) => {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch { return 0; }
};
const pgPids = () => execSync('pgrep -u postgres postgres || true').toString().split('\n').filter(Boolean).map(Number);
const pgTicks = () => pgPids().reduce((a, p) => a + ticks(p), 0);
async function sample(tree, home) {
  for (const h of homes) await new EmbeddedPostgres(h).stop().catch(() => {});
  const env = { ...process.env, MAILGATE_HOME: home, LOG_LEVEL: process.env.LL || 'silent', MAILGATE_USER_CONCURRENCY: '32' };
  delete env.DATABASE_URL;
  const tSpawn = process.hrtime.bigint(); const c = spawn(process.execPath, [...(process.env.NODEARGS ? process.env.NODEARGS.split(' ') : []), ...(process.env.PROF ? ['--cpu-prof', '--cpu-prof-dir=' + process.env.PROF, '--cpu-prof-interval=200'] : []), path.join(tree, 'packages/bench/lib/imap-child.js')], { env, stdio: ['ignore', 'pipe', 'pipe'] }); c.stderr.on('data', (d) => process.stderr.write(d));
  const port = await new Promise((res, rej) => { let out = ''; c.stdout.on('data', (d) => { if (/^{.*\n/m.test(out)) process.stderr.write(d); out += d; if (/^{.*\n/m.test(out)) res(JSON.parse(out.split('\n').find((l) => l.startsWith('{'))).port); }); c.on('exit', (x) => rej(new Error('exit ' + x))); });
  const startMs = Number(process.hrtime.bigint() - tSpawn) / 1e6;
  execSync('sync; echo 3 > /proc/sys/vm/drop_caches', { shell: '/bin/sh' });
  const raw = new RawImapClient({ host: '127.0.0.1', port });
  await raw.connect();
  await raw.login(user, pass);
  await raw.command('SELECT INBOX');
  const n0 = ticks(c.pid); const p0 = pgTicks();
  const a = await raw.command(CMD);
  const n1 = ticks(c.pid); const p1 = pgTicks();
  await raw.logout().catch(() => {});
  const gone = new Promise((r) => c.once('exit', r)); c.kill('SIGTERM'); await gone;
  return { startMs: startMs.toFixed(0), ms: a.ms.toFixed(1), bytes: a.bytes, untagged: a.untagged, cpuNode: (n1 - n0) * 10, cpuPg: (p1 - p0) * 10 };
}
(async () => {
  for (let i = 0; i < Number(pairs); i++) for (let k = 0; k < trees.length; k++) console.log(request, path.basename(trees[k]), JSON.stringify(await sample(trees[k], homes[k])));
  for (const h of homes) await new EmbeddedPostgres(h).stop().catch(() => {});
})().catch((e) => { console.error(e); process.exit(1); });
