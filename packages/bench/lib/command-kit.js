'use strict';

/*
 * What the bench's commands (lib/commands/<name>.js) share: the repo root (results go to
 * bench/results there), the mailgate CLI they drive, their option reading, and the one place
 * that reaches the repo's test support (the corpus, the hostile and legacy mail builders).
 * It owns no measurement: a command's figures are its own.
 */

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

/** The repository root: bench/results/ and the CLI are found from here. */
const ROOT = path.resolve(__dirname, '..', '..', '..');

/** The repo's mailgate entry point, for benchmark commands that drive the CLI. */
const CLI = path.join(ROOT, 'packages', 'cli', 'bin', 'mailgate.js');

/**
 * Runs `mailgate …` to completion; throws with its stderr when it fails.
 * @param {string[]} cliArgs
 * @param {NodeJS.ProcessEnv} env
 * @returns {import('node:child_process').SpawnSyncReturns<string>}
 */
function run(cliArgs, env) {
  const r = spawnSync(process.execPath, [CLI, ...cliArgs], {
    env,
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  if (r.status !== 0) {
    throw new Error(`mailgate ${cliArgs.join(' ')} failed (${r.status}): ${r.stderr}`);
  }
  return r;
}

/**
 * The value after `name` in a command's arguments, or `dflt` (the scripts' option style, kept
 * as it was so every documented command line still works).
 * @param {string[]} args
 * @param {string} name e.g. '--runs'
 * @param {*} dflt
 * @returns {*}
 */
function option(args, name, dflt) {
  return args.includes(name) ? args[args.indexOf(name) + 1] : dflt;
}

/**
 * A module of the repo's test support (@mailgate/test-support, packages/test-support/lib/<name>.js:
 * the shared corpus, the hostile and legacy mail builders), by path: the test support stands on
 * the bench (its seeded rng), so the bench cannot declare it as a dependency. Benchmarks stand on the same mail as the tests; this is the one
 * place that path is spelt.
 * @param {string} name e.g. 'corpus'
 * @returns {object}
 */
function testSupport(name) {
  return require(path.join(ROOT, 'packages', 'test-support', 'lib', `${name}.js`));
}

/**
 * The unpacked shared Enron set, or null when ../shared/corpus is not beside the repo.
 * @returns {string|null}
 */
function corpusDir() {
  return testSupport('corpus').corpusDir();
}

/**
 * Writes a run's JSON to bench/results/<name>-<date as a file name>.json and says so on
 * stderr (the file name every command wrote before the move, kept).
 * @param {string} name e.g. 'import'
 * @param {string} date an ISO date, the run's
 * @param {object} result
 * @returns {string} the file written
 */
function saveResult(name, date, result) {
  const dir = path.join(ROOT, 'bench', 'results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}-${date.replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
  process.stderr.write(`wrote ${path.relative(ROOT, file)}\n`);
  return file;
}

module.exports = { ROOT, CLI, run, option, testSupport, corpusDir, saveResult };
