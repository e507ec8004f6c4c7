'use strict';
// usage: node imap-date-2026-11-28.js OLD_TREE [NEW_TREE] [PAIRS]
// CPU of formatting INTERNALDATEs with `imapDate` (packages/imap/lib/commands/fetch.js) of two
// trees: OLD_TREE (field by field, as on main at 4c23c64) and NEW_TREE (per-day texts and a
// two-digit table; default: the repo this script lives in), PAIRS (default 5) pairs of a new
// `node` process per tree, old first. Each process formats 21,282 dates one 1.1 h apart (~975
// days, like the large Enron box) in 15 passes and prints the CPU (process.cpuUsage) of the
// first pass (code not yet optimised, as in a new IMAP process), then the least and the median
// (the 8th of the 14 sorted) of the other 14 passes. The result:
// bench/results/imap-cold-listview-2026-11-28/imap-date.txt.
// An old tree without node_modules (e.g. `git archive 4c23c64 | tar -x -C /tmp/old`) resolves
// its dependencies from NEW_TREE's node_modules (NODE_PATH).
const path = require('path');
const { execFileSync } = require('child_process');

const DATES = 21282;
const PASSES = 15;

/** One process: time imapDate of `tree` and print its figures as JSON. */
function child(tree) {
  const { imapDate } = require(path.join(tree, 'packages/imap/lib/commands/fetch.js'));
  const dates = [];
  for (let i = 0; i < DATES; i++)
    dates.push(new Date(Date.UTC(2001, 0, 1) + i * 3600e3 * 1.1 + i * 13));
  const ms = [];
  let x = 0;
  for (let p = 0; p < PASSES; p++) {
    const c0 = process.cpuUsage();
    for (const d of dates) x += imapDate(d).length;
    const c = process.cpuUsage(c0);
    ms.push((c.user + c.system) / 1000);
  }
  if (x === 0) throw new Error('no text');
  const rest = ms.slice(1).sort((a, b) => a - b);
  const r = (v) => Math.round(v * 10) / 10;
  console.log(
    JSON.stringify({
      firstCpuMs: r(ms[0]),
      minCpuMs: r(rest[0]),
      medCpuMs: r(rest[rest.length >> 1]),
    }),
  );
}

if (process.argv[2] === '--child') {
  child(path.resolve(process.argv[3]));
} else {
  const here = path.join(__dirname, '..', '..', '..');
  const [oldTree, newTree = here, pairs = '5'] = process.argv.slice(2);
  if (!oldTree) {
    console.error('usage: node imap-date-2026-11-28.js OLD_TREE [NEW_TREE] [PAIRS]');
    process.exit(2);
  }
  const env = { ...process.env, NODE_PATH: path.resolve(newTree, 'node_modules') };
  const run = (tree) =>
    execFileSync(process.execPath, [__filename, '--child', path.resolve(tree)], {
      env,
      encoding: 'utf8',
    }).trim();
  for (let i = 0; i < Number(pairs); i++) console.log(`old ${run(oldTree)} new ${run(newTree)}`);
}
