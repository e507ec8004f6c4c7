'use strict';

const { CommanderError } = require('commander');
const { loadConfig, createLogger, isCoded } = require('@mailgate/core');
const { createContext } = require('./context');
const { buildProgram } = require('./program');

/*
 * The CLI contract (brief "Contracts"): `--json` prints exactly one JSON object on stdout;
 * progress and logs go to stderr; exit 0 ok, 1 failure, 2 bad usage.
 */

/**
 * Runs the CLI.
 * @param {string[]} argv process.argv
 * @returns {Promise<number>} exit code
 */
async function main(argv) {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    process.stderr.write(`mailgate: ${err.message}\n`);
    return 2;
  }
  const log = createLogger({ logLevel: process.env.LOG_LEVEL || 'warn' });
  const ctx = createContext(config, log);
  const program = buildProgram(ctx);
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      if (
        err.code === 'commander.helpDisplayed' ||
        err.code === 'commander.version' ||
        err.code === 'commander.help'
      )
        return 0;
      return 2;
    }
    if (err && err.code === 'USAGE') {
      process.stderr.write(`mailgate: ${err.message}\n`);
      return 2;
    }
    if (isCoded(err)) {
      process.stderr.write(`mailgate: ${err.code}: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  return ctx.exitCode();
}

module.exports = { main };
