'use strict';
/*
 * The client and the report of first-fetch-timeline-2026-11-28.sh.
 *   node first-fetch-timeline-2026-11-28.js drive PORT FIRST_UID OUT.json
 *     LOGIN as FETCH_USER/FETCH_PASSWORD, SELECT INBOX, then `UID FETCH n (BODY.PEEK[])` of
 *     3,000 messages never fetched (uids FIRST_UID + 4i), then the same 3,000 again (from the
 *     body cache; PHASES=first: not that); monotonic µs of each command's write and of its
 *     tagged OK read.
 *   node first-fetch-timeline-2026-11-28.js report SERVER.json CLIENT.json
 *     medians (the first 200 of each phase left out) of each leg, and quantiles of the main ones.
 */
const fs = require('fs');
const net = require('net');
const now = () => Number(process.hrtime.bigint()) / 1e3;
const [mode, ...args] = process.argv.slice(2);

async function drive(port, first, out) {
  const socket = net.connect({ port: Number(port), host: '127.0.0.1' });
  let buf = '';
  let waiting = null;
  socket.on('data', (d) => { buf += d.toString('latin1'); if (waiting) waiting(); });
  const until = (re) => new Promise((resolve) => {
    const check = () => { const m = re.exec(buf); if (m) { buf = buf.slice(m.index + m[0].length); waiting = null; resolve(); } };
    waiting = check; check();
  });
  await until(/^\* OK[^\r\n]*\r\n/m);
  const cmd = async (tag, text) => { const p = until(new RegExp(`^${tag} (OK|NO|BAD)[^\\r\\n]*\\r\\n`, 'm')); socket.write(`${tag} ${text}\r\n`); await p; };
  await cmd('a', `LOGIN ${process.env.FETCH_USER} ${process.env.FETCH_PASSWORD}`);
  await cmd('b', 'SELECT INBOX');
  const rows = [];
  for (const phase of (process.env.PHASES || 'first,cached').split(',')) {
    for (let i = 0; i < 3000; i++) {
      const t0 = now();
      await cmd(`${phase[0]}${i}`, `UID FETCH ${Number(first) + 4 * i} (BODY.PEEK[])`);
      rows.push({ phase, send: t0, recv: now() });
    }
  }
  fs.writeFileSync(out, JSON.stringify(rows));
  socket.destroy();
}

function report(serverFile, clientFile) {
  const s = JSON.parse(fs.readFileSync(serverFile));
  const c = JSON.parse(fs.readFileSync(clientFile));
  const srv = s.slice(s.length - c.length); // the drive's commands are the last ones
  const q = (a, p) => { const x = a.filter(Number.isFinite).sort((m, n) => m - n); return x.length ? +x[Math.floor(x.length * p)].toFixed(1) : null; };
  const out = {};
  for (const phase of ['first', 'cached']) {
    const idx = c.map((r, i) => [r, srv[i]]).filter(([r]) => r.phase === phase).slice(200);
    const g = (f, p = 0.5) => q(idx.map(([r, v]) => f(r, v)), p);
    const legs = {
      total: (r) => r.recv - r.send,
      clientToServer: (r, v) => v.rx - r.send,
      serverTotal: (r, v) => v.tx - v.rx,
      serverToClient: (r, v) => r.recv - v.tx,
      cmdCpu: (r, v) => v.cmdCpu,
      afterTxCpu: (r, v) => v.postCpu,
    };
    if (phase === 'first') Object.assign(legs, {
      rxToBackend: (r, v) => v.be0 - v.rx,
      backendToStore: (r, v) => v.st0 - v.be0,
      storeToQuery: (r, v) => v.q0 - v.st0,
      pgRoundTrip: (r, v) => v.q1 - v.q0,
      queryToStoreDone: (r, v) => v.st1 - v.q1,
      storeToBackendDone: (r, v) => v.be1 - v.st1,
      backendDoneToScanList: (r, v) => v.sl0 - v.be1,
      scanList: (r, v) => v.sl1 - v.sl0,
      scanListToUntagged: (r, v) => v.un0 - v.sl1,
      untagged: (r, v) => v.un1 - v.un0,
      untaggedToSync: (r, v) => v.sy0 - v.un1,
      sync: (r, v) => v.sy1 - v.sy0,
      syncToLastWrite: (r, v) => v.tx - v.sy1,
    });
    const res = {};
    for (const [k, f] of Object.entries(legs)) res[k] = { p50: g(f), p90: g(f, 0.9) };
    out[phase] = res;
  }
  process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
}

(mode === 'drive' ? drive(...args) : Promise.resolve(report(...args))).catch((e) => { console.error(e); process.exit(1); });
