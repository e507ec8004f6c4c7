// Self time per function (ms) of the LAST FETCH in a --cpu-prof profile (the warm-up runs FETCHes
// first): from the start of the last cluster of samples with MARK (runFetch) on the stack to the
// last sample with END (writePackedResponses) on it.
//   node listview-prof-last-2026-11-28.js FILE.cpuprofile [MARK] [TOP] [END]
// self time per function in the LAST cluster of samples with MARK on the stack (gap > 20 ms splits)
const fs = require('fs');
const p = JSON.parse(fs.readFileSync(process.argv[2]));
const mark = process.argv[3] || 'runFetch';
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children || []) parent.set(c, n.id);
const onStack = (id, name) => { for (let x = id; x; x = parent.get(x)) if (byId.get(x).callFrame.functionName === name) return true; return false; };
let t = p.startTime; const times = p.timeDeltas.map((d) => (t += d));
const hits = []; p.samples.forEach((s, i) => { if (onStack(s, mark)) hits.push(i); });
let start = hits[hits.length - 1];
for (let k = hits.length - 1; k > 0; k--) { if (times[hits[k]] - times[hits[k - 1]] > 20000) break; start = hits[k - 1]; }
let end = start; p.samples.forEach((s, i) => { if (i >= start && onStack(s, process.argv[5] || 'writePackedResponses')) end = i; });
const self = new Map();
for (let i = start; i <= end; i++) { const n = byId.get(p.samples[i]); const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`; self.set(k, (self.get(k) || 0) + (times[i + 1] - times[i] || 0) / 1000); }
console.log('window ms', ((times[end] - times[start]) / 1000).toFixed(1), 'from start of profile', ((times[start] - p.startTime) / 1000).toFixed(1));
[...self].sort((a, b) => b[1] - a[1]).slice(0, Number(process.argv[4] || 25)).forEach(([k, v]) => console.log(v.toFixed(1).padStart(7), k));
