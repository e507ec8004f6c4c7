'use strict';

const path = require('node:path');
const { spawnSync } = require('node:child_process');

/** The repo's mailgate entry point, for benchmark scripts that drive the CLI. */
const CLI = path.resolve(__dirname, '..', '..', 'packages', 'cli', 'bin', 'mailgate.js');

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

module.exports = { CLI, run };
