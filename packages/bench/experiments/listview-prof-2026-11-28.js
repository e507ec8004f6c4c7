// Self time per function (ms) in a FETCH's window of a --cpu-prof profile of the IMAP process
// (listview-cold-2026-11-28.js PROF=DIR): from the first sample with FIRST on the stack to the
// last with LAST on it (the writer), idle and the garbage collector included.
//   node listview-prof-2026-11-28.js FILE.cpuprofile [FIRST=runFetch] [TOP=25] [LAST=writeMetaResponses]
const fs = require('fs');
const p = JSON.parse(fs.readFileSync(process.argv[2]));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children || []) parent.set(c, n.id);
const onStack = (id, name) => { for (let x = id; x; x = parent.get(x)) if (byId.get(x).callFrame.functionName === name) return true; return false; };
let t = p.startTime; const times = p.timeDeltas.map((d) => (t += d));
const marker = process.argv[3] || 'runFetch';
let first = -1, last = -1;
p.samples.forEach((s, i) => { if (first < 0 && onStack(s, marker)) first = i; if (onStack(s, process.argv[5] || 'writeMetaResponses')) last = i; });
const self = new Map(); let total = 0;
for (let i = first; i <= last; i++) {
  const dt = (times[i + 1] || times[i]) - times[i];
  const n = byId.get(p.samples[i]).callFrame;
  const k = `${n.functionName || '(anon)'} ${n.url.split('/').slice(-2).join('/')}:${n.lineNumber}`;
  self.set(k, (self.get(k) || 0) + dt); total += dt;
}
console.log('window ms', ((times[last] - times[first]) / 1000).toFixed(1));
[...self].sort((a, b) => b[1] - a[1]).slice(0, Number(process.argv[4] || 25)).forEach(([k, v]) => console.log((v / 1000).toFixed(1).padStart(7), k));
