// node packages/bench/experiments/api-load-2026-11-25.js <repo> <home> <seconds> [paths...] : serve (optionally profiled via PROF dir), autocannon each path
// Scratch load client of the 2026-11-25 A/B (docs/benchmarks.md, Issue 11): starts `mailgate serve --no-imap` of a tree on a home holding the bench:api mailbox and a token file, 200 warm-up requests, then autocannon (10 connections) per path.
const repo = process.argv[2], home = process.argv[3], secs = Number(process.argv[4] || 3);
const paths = process.argv.slice(5);
const fs = require('fs'), path = require('path');
const { spawn } = require('child_process');
const autocannon = require(require.resolve('autocannon', { paths: [repo] }));
const token = fs.readFileSync(path.join(home, 'token'), 'utf8').trim();
const env = { ...process.env, LOG_LEVEL: 'error', MAILGATE_HOME: home, PORT: '0', HOST: '127.0.0.1' };
const args = [...(process.env.PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.PROF] : []), repo + '/packages/cli/bin/mailgate.js', 'serve', '--no-imap'];
const server = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
let err = '';
const url = new Promise((res, rej) => { server.stderr.on('data', (d) => { err += d; const m = /listening on (http:\/\/\S+)/.exec(err); if (m) res(m[1]); }); server.once('exit', (c) => rej(new Error('exit ' + c + err))); });
(async () => {
  const base = (await url) + '/api/v1';
  const headers = { authorization: 'Bearer ' + token };
  for (const p of paths) {
    const r0 = await fetch(base + p, { headers }); const body = await r0.text();
    for (let i = 0; i < 200; i++) await (await fetch(base + p, { headers })).arrayBuffer();
    const r = await autocannon({ url: base + p, headers, connections: 10, duration: secs });
    console.log(JSON.stringify({ path: p, status: r0.status, bytes: body.length, reqPerSec: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx }));
  }
  server.kill('SIGINT');
  await new Promise((r) => server.once('exit', r));
})().catch((e) => { console.error(e); server.kill(); process.exit(1); });
