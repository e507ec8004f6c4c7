'use strict';
/*
 * mailgate's IMAP server (bench lib/imap-child.js of the tree TREE) with V8's sampling heap
 * profiler over a window, for first-fetch-alloc-2026-11-28.sh: SIGUSR1 starts sampling (every
 * 256 bytes on average, objects the collector freed since included), SIGUSR2 stops it and
 * prints the JS-heap bytes allocated per fetch (PER fetches in the window) and the top
 * allocation sites. Buffers' backing stores are outside the JS heap and not counted.
 */
const path = require('path');
const inspector = require('inspector');
const TREE = path.resolve(process.env.TREE || path.join(__dirname, '../../..'));
const session = new inspector.Session();
session.connect();
const post = (m, p) => new Promise((res, rej) => session.post(m, p || {}, (e, r) => (e ? rej(e) : res(r))));
process.on('SIGUSR1', () => {
  post('HeapProfiler.startSampling', { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true }).catch((e) => console.error(e));
});
process.on('SIGUSR2', async () => {
  const { profile } = await post('HeapProfiler.stopSampling');
  const self = new Map();
  const walk = (n) => {
    const cf = n.callFrame;
    const k = `${cf.functionName || '(anon)'} ${cf.url.replace(/.*\/(node_modules|packages)\//, '$1/')}:${cf.lineNumber}`;
    self.set(k, (self.get(k) || 0) + n.selfSize);
    for (const c of n.children) walk(c);
  };
  walk(profile.head);
  const N = Number(process.env.PER || 3000);
  const tot = [...self.values()].reduce((a, b) => a + b, 0);
  console.error(`# JS-heap bytes allocated per fetch: ${(tot / N).toFixed(0)}`);
  [...self].sort((a, b) => b[1] - a[1]).slice(0, 25).forEach(([k, v]) => console.error(`${(v / N).toFixed(0).padStart(7)} ${k}`));
});
require(path.join(TREE, 'packages/bench/lib/imap-child.js'));
