'use strict';

/*
 * The bench's command line: `mailgate bench` (the 2003 study, added to the mailgate CLI by
 * addBenchCommand) and the bench's other commands (`node packages/bench/bin/mailgate-bench.js
 * <command>`, behind the root `npm run bench:<command>` scripts), one module each under
 * commands/. It dispatches and reports errors; the measuring is the commands' own.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { runBench, REQUESTS } = require('./runner');
const { machineFacts } = require('./machine');
const { writeReport } = require('./report');
const { errors } = require('@mailgate/core');
const { ALL_BACKENDS, SIZES } = require('./index-constants');

/**
 * The default corpus: the unpacked shared Enron set (@mailgate/test-support/corpus unpacks
 * ../shared/corpus once into $TMPDIR/mailgate-corpus), or null when it is not beside the repo.
 * @returns {string|null}
 */
function defaultCorpus() {
  try {
    return require(
      path.join(__dirname, '..', '..', 'test-support', 'lib', 'corpus.js'),
    ).corpusDir();
  } catch {
    return null;
  }
}

const list = (allowed, what) => (v) => {
  const xs = v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  // An empty list selects nothing to measure: bad usage, before any mailbox is built.
  if (!xs.length) {
    const err = new Error(`no ${what} given (one or more of ${allowed.join(', ')})`);
    err.code = 'USAGE';
    throw err;
  }
  for (const x of xs) {
    if (!allowed.includes(x)) {
      const err = new Error(`unknown ${what} ${x} (one of ${allowed.join(', ')})`);
      err.code = 'USAGE';
      throw err;
    }
  }
  return xs;
};

/**
 * Adds `mailgate bench` to the CLI program.
 * @param {import('commander').Command} program
 * @param {{config: object, out: (json: boolean, obj: object, human: (o: object) => void) => void}} ctx
 */
function addBenchCommand(program, ctx) {
  program
    .command('bench')
    .description(
      'the 2003 database-vs-flat-file study, reproduced: build mailboxes, time every backend',
    )
    .option(
      '--corpus <dir>',
      'corpus directory (default: the unpacked Enron set of ../shared/corpus)',
    )
    .option('--work <dir>', 'scratch dir: built mailboxes, embedded PostgreSQL (kept for re-runs)')
    .option('--out <dir>', 'where results.json, results.md and charts/ go (default <work>/out)')
    .option('--sizes <list>', 'small, medium, large', list(Object.keys(SIZES), 'size'), ['small'])
    .option('--backends <list>', ALL_BACKENDS.join(', '), list(ALL_BACKENDS, 'backend'), ['pg'])
    .option('--runs <n>', 'warm repeats per request (median, min, max)', positiveInt('--runs'), 5)
    .option(
      '--budget <seconds>',
      'per request: start no further warm repeat once the timed samples took this long ' +
        '(at least one sample; results.md notes requests that got fewer than --runs)',
      (v) => {
        const n = Number(v);
        if (!Number.isFinite(n) || n <= 0) {
          const err = new Error('--budget must be a positive number of seconds');
          err.code = 'USAGE';
          throw err;
        }
        return n;
      },
      10,
    )
    .option(
      '--via <list>',
      'how pg and es are reached: store (the storage interface), api (the HTTP API, as ' +
        'backends pg-api/es-api), or store,api for both side by side',
      (v) => {
        const via = v.split(',').map((x) => x.trim());
        if (!via.length || via.some((x) => x !== 'store' && x !== 'api')) {
          const err = new Error('--via takes store, api or store,api');
          err.code = 'USAGE';
          throw err;
        }
        return via;
      },
      ['store'],
    )
    .option('--cold', 'also time cold requests (server restarted, page cache dropped)')
    .option(
      '--cold-runs <n>',
      'cold samples per request, each after its own restart and cache drop (median, min, max)',
      positiveInt('--cold-runs'),
      1,
    )
    .option(
      '--requests <list>',
      'time only these requests, e.g. first_open,headers_list (the mailboxes are still ' +
        'built and loaded): ' +
        REQUESTS.filter((r) => r !== 'import').join(', '),
      list(REQUESTS, 'request'),
    )
    .option('--json', 'print the results.json object on stdout')
    .action(async (o) => {
      const corpus = o.corpus || defaultCorpus();
      if (!corpus) {
        const err = new Error(
          'no corpus: pass --corpus DIR (../shared/corpus is not beside the repo)',
        );
        err.code = 'USAGE';
        throw err;
      }
      const work = path.resolve(o.work || path.join(os.tmpdir(), 'mailgate-bench'));
      const outDir = path.resolve(o.out || path.join(work, 'out'));
      fs.mkdirSync(work, { recursive: true });
      const log = (s) => process.stderr.write(s + '\n');
      const started = Date.now();
      const run = await runBench({
        corpus,
        work,
        sizes: o.sizes,
        backends: applyVia(o.backends, o.via),
        runs: o.runs,
        budget: o.budget,
        cold: !!o.cold,
        coldRuns: o.coldRuns,
        requests: o.requests,
        log,
        config: ctx.config,
      });
      // Nothing measured: no results.json (an empty one would read as a run), exit 1 with why.
      if (!run.results.length) {
        throw new errors.BENCH_NO_RESULTS(run.empty.join('; ') || 'nothing was run');
      }
      // A partial run says which size and backend produced nothing, here on stderr and in the
      // notes of results.json and results.md (the runner's).
      for (const part of run.empty) log(`NO RESULTS: ${part}`);
      const machine = {
        ...machineFacts({ work, config: ctx.config }),
        pageCacheDropped: run.dropCaches,
        notes: run.notes,
        // The run's own wall time, whole and per size and backend (planning the next run).
        benchSeconds: Math.round((Date.now() - started) / 100) / 10,
        wall: run.wall,
      };
      const data = { machine, results: run.results };
      const command = `mailgate bench ${process.argv.slice(3).join(' ')}`.trim();
      const files = writeReport(outDir, data, { queries: run.queries, notes: run.notes, command });
      fs.writeFileSync(
        path.join(outDir, 'queries.json'),
        JSON.stringify(run.queries, null, 2) + '\n',
      );
      const seconds = (Date.now() - started) / 1000;
      log(
        `wrote ${files.json}, ${files.md} and ${files.charts.length} charts in ${seconds.toFixed(1)} s`,
      );
      const bad = run.results.filter((r) => !r.agrees);
      for (const r of bad)
        log(`DISAGREES: ${r.backend} ${r.size} ${r.request} (${r.matches} matches)`);
      ctx.out(!!o.json, data, () => {});
    });
}

/** A commander parser of a positive integer option (USAGE error otherwise). */
function positiveInt(flag) {
  return (v) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) {
      const err = new Error(`${flag} must be a positive integer`);
      err.code = 'USAGE';
      throw err;
    }
    return n;
  };
}

/**
 * Backend list after `--via`: pg and es become pg-api/es-api (api) or both (store,api).
 * @param {string[]} backends
 * @param {string[]} via
 * @returns {string[]}
 */
function applyVia(backends, via) {
  const out = [];
  for (const b of backends) {
    const served = b === 'pg' || b === 'es';
    if (!served || via.includes('store')) out.push(b);
    if (served && via.includes('api')) out.push(`${b}-api`);
  }
  return [...new Set(out)];
}

/**
 * The bench's commands beside the study, by name: each is `commands/<name>.js`, exporting
 * `{description, usage, run(args)}`. Loaded only when run (some need a browser or autocannon).
 */
const COMMANDS = [
  'api',
  'deliver',
  'disk',
  'es',
  'fleet',
  'imap-fetch',
  'imap-idle',
  'imap-idle-latency',
  'imap-losses',
  'import',
  'kdf-cost',
  'legacy',
  'mime-parse',
  'report',
  'torture',
  'web',
];

/** Loads a command's module. */
const command = (name) => require(`./commands/${name}`);

/** The usage text: every command with its options. */
function usage() {
  const lines = ['usage: mailgate-bench <command> [options]', ''];
  for (const name of COMMANDS) {
    const c = command(name);
    lines.push(`  ${name} ${c.usage}`.trimEnd(), `      ${c.description}`);
  }
  lines.push('', 'The 2003 study itself: mailgate bench --help');
  return lines.join('\n') + '\n';
}

/**
 * Runs one bench command. Errors end as `CODE: message` on stderr (the CLI's form; a failure
 * without a code keeps its stack, as the scripts printed it): exit 2 for bad usage, 1 otherwise.
 * @param {string[]} argv e.g. ['import', '--only', 'quarter']
 * @returns {Promise<number>} the exit code
 */
async function main(argv) {
  const [name, ...args] = argv;
  const err = (code, message) => process.stderr.write(`${code}: ${message}\n`);
  if (!name || name === '--help' || name === 'help') {
    process.stdout.write(usage());
    return name ? 0 : 2;
  }
  if (!COMMANDS.includes(name)) {
    err('USAGE', `unknown bench command ${name} (one of ${COMMANDS.join(', ')})`);
    return 2;
  }
  const c = command(name);
  if (args.includes('--help')) {
    process.stdout.write(`usage: mailgate-bench ${name} ${c.usage}\n${c.description}\n`);
    return 0;
  }
  try {
    await c.run(args);
    return process.exitCode || 0;
  } catch (e) {
    if (e.code === 'USAGE') {
      err('USAGE', e.message);
      return 2;
    }
    process.stderr.write(`bench ${name} failed: ${e.stack || e.message}\n`);
    return 1;
  }
}

module.exports = { addBenchCommand, applyVia, COMMANDS, main };
