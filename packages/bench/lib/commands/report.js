'use strict';

/*
 * Re-renders a bench run's results.md and charts from its results.json (and queries.json),
 * e.g. after the report format gained a section: the measurements are never re-typed.
 *
 *   node packages/bench/bin/mailgate-bench.js report DIR
 */

const fs = require('node:fs');
const path = require('node:path');
const { writeReport } = require('../report');

/**
 * `bench report DIR`.
 * @param {string[]} args [DIR]
 */
function main(args) {
  const dir = args[0];
  if (!dir || !fs.existsSync(path.join(dir, 'results.json'))) {
    const err = new Error('report DIR: a directory with results.json');
    err.code = 'USAGE';
    throw err;
  }
  const data = JSON.parse(fs.readFileSync(path.join(dir, 'results.json'), 'utf8'));
  const qf = path.join(dir, 'queries.json');
  const queries = fs.existsSync(qf) ? JSON.parse(fs.readFileSync(qf, 'utf8')) : undefined;
  // The command line of the run, kept from the previous results.md when there is one.
  const mdf = path.join(dir, 'results.md');
  const old = fs.existsSync(mdf) ? fs.readFileSync(mdf, 'utf8') : '';
  const m = /^```\n(mailgate bench[^\n]*)\n```/m.exec(old);
  const files = writeReport(dir, data, {
    queries,
    notes: (data.machine && data.machine.notes) || [],
    command: m ? m[1] : undefined,
  });
  process.stderr.write(`wrote ${files.md} and ${files.charts.length} charts\n`);
}

module.exports = {
  description: "re-render a run's results.md and charts from its results.json",
  usage: 'DIR',
  run: main,
};
