'use strict';

const { loadConfig, createLogger } = require('@mailgate/core');
const { createContext } = require('./context');
const { buildProgram } = require('./program');
const { reportFailure } = require('./failure');

/*
 * The CLI contract (brief "Contracts"): `--json` prints exactly one JSON object on stdout;
 * progress and logs go to stderr; exit 0 ok, 1 failure, 2 bad usage or bad query. Every
 * failure leaves through reportFailure (failure.js).
 */

/**
 * Runs the CLI. Never throws: every error is reported and turned into an exit code.
 * @param {string[]} argv process.argv
 * @returns {Promise<number>} exit code
 */
async function main(argv) {
  const args = argv.slice(2);
  const json = args.includes('--json');
  const debug = (process.env.LOG_LEVEL || '').toLowerCase() === 'debug';
  try {
    const config = loadConfig();
    const log = createLogger(loggerOptions(args, process.env.LOG_LEVEL));
    const ctx = createContext(config, log);
    await buildProgram(ctx).parseAsync(argv);
    const { code, failure } = ctx.exit();
    // A command that ends with a verdict (verify, es verify) sets a failure instead of
    // throwing: its --json result object stays the one object on stdout.
    if (failure) process.stderr.write(`${failure.code}: ${failure.message}\n`);
    return code;
  } catch (err) {
    return reportFailure(err, { json, debug });
  }
}

/**
 * How the CLI logs (issue 30.10): LOG_LEVEL as set, in JSON; else with --json, warnings as
 * JSON lines (a script reads them); else for a person, warnings as text lines, and with
 * --quiet nothing below an error (failures are printed by failure.js in any case).
 * @param {string[]} args
 * @param {string|undefined} level LOG_LEVEL
 * @returns {{logLevel: string, format: 'json'|'text'}}
 */
function loggerOptions(args, level) {
  if (level) return { logLevel: level, format: 'json' };
  if (args.includes('--json')) return { logLevel: 'warn', format: 'json' };
  return { logLevel: args.includes('--quiet') ? 'error' : 'warn', format: 'text' };
}

module.exports = { main, loggerOptions };
