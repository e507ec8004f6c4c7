'use strict';

const { CommanderError } = require('commander');
const { errors, isCoded } = require('@mailgate/core');

/*
 * The CLI's one error path (issue 11, brief "Contracts"): every failure becomes
 * {code, message, exitCode}; it is printed as `CODE: message` on stderr, and with --json as
 * exactly one {"error":{"code","message"}} object on stdout. Stack traces only with
 * LOG_LEVEL=debug: they help a developer and mean nothing to a user.
 */

// Bad usage and bad queries exit 2; every other failure exits 1.
const USAGE_CODES = new Set(['USAGE', 'CONFIG_INVALID', 'INVALID_QUERY', 'ES_UNSUPPORTED_QUERY']);

/**
 * What to tell the user about an error thrown by a command (or by option parsing).
 * @param {unknown} err
 * @returns {{code: string, message: string, exitCode: number}|null} null for --help/--version
 */
function describeFailure(err) {
  if (err instanceof CommanderError) {
    if (['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(err.code))
      return null;
    // Commander's messages read "error: unknown option '--x'"; the code says it is usage.
    return { code: 'USAGE', message: err.message.replace(/^error:\s*/, ''), exitCode: 2 };
  }
  const e = coded(err);
  return { code: e.code, message: e.message, exitCode: USAGE_CODES.has(e.code) ? 2 : 1 };
}

/**
 * The catalogue error for err: coded errors as they are; a port in use named with its port;
 * anything else INTERNAL with its message (the CLI user is the operator, and the message of
 * a system error such as EACCES names the file).
 * @param {any} err
 * @returns {{code: string, message: string}}
 */
function coded(err) {
  if (isCoded(err) || (err && err.code === 'USAGE')) return err;
  if (err && err.code === 'EADDRINUSE') {
    return new errors.PORT_IN_USE(err.port ?? '?', err.address ?? 'localhost');
  }
  const message = err && err.message ? err.message : String(err);
  return { code: 'INTERNAL', message: `unexpected error: ${message}` };
}

/**
 * Prints a failure the one way (see the module comment) and returns the exit code.
 * @param {unknown} err
 * @param {{json: boolean, debug: boolean}} opts
 * @returns {number}
 */
function reportFailure(err, { json, debug }) {
  const f = describeFailure(err);
  if (!f) return 0;
  process.stderr.write(`${f.code}: ${f.message}\n`);
  if (f.code === 'USAGE') process.stderr.write('(mailgate help <command> shows its usage)\n');
  if (debug && err && err.stack) process.stderr.write(`${err.stack}\n`);
  if (json)
    process.stdout.write(JSON.stringify({ error: { code: f.code, message: f.message } }) + '\n');
  return f.exitCode;
}

module.exports = { describeFailure, reportFailure, USAGE_CODES };
