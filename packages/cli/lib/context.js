'use strict';

const { errors } = require('@mailgate/core');
const { createMailService } = require('@mailgate/service');

/*
 * What every command module gets: configuration, logger, the output contract and the exit
 * code. Output contract (README "CLI"): `--json` prints exactly one JSON object on stdout;
 * progress and human reports go to stderr (tables and search hits to stdout).
 */

/**
 * @typedef {object} CliContext
 * @property {object} config loadConfig() result
 * @property {import('pino').Logger} log
 * @property {<T>(fn: (service: import('@mailgate/service').MailService) => Promise<T>, opts?: {readOnly?: boolean}) => Promise<T>} withService
 *   the mail service for the command's duration: backends only through its openBackend;
 *   readOnly: never create the embedded database (NO_DATABASE)
 * @property {<T>(kind: string, user: string, fn: (backend: object) => Promise<T>, opts?: {readOnly?: boolean}) => Promise<T>} withBackend
 * @property {(json: boolean, obj: object, human: (o: object) => void) => void} out
 * @property {(code: number, failure?: {code: string, message: string}) => void} setExit exit
 *   code when the command ends without throwing, and the coded verdict printed on stderr
 * @property {() => {code: number, failure: {code: string, message: string}|null}} exit
 */

/**
 * Builds the context shared by all commands of one run.
 * @param {object} config
 * @param {import('pino').Logger} log
 * @returns {CliContext}
 */
function createContext(config, log) {
  let exitCode = 0;
  let exitFailure = null;
  return {
    config,
    log,
    async withService(fn, opts = {}) {
      // No background purge: CLI commands expunge nothing, and a short-lived process should
      // not start sweeping other mailboxes. A read-only command never creates the embedded
      // database: NO_DATABASE instead (README "Embedded PostgreSQL").
      const service = await createMailService({
        config,
        logger: log,
        purge: false,
        createDatabase: !opts.readOnly,
      });
      try {
        return await fn(service);
      } finally {
        await service.close();
      }
    },
    withBackend(kind, user, fn, opts = {}) {
      return this.withService(async (service) => {
        const be = await service.openBackend(kind, user);
        try {
          return await fn(be);
        } finally {
          await be.close();
        }
      }, opts);
    },
    out(json, obj, human) {
      if (json) process.stdout.write(JSON.stringify(obj) + '\n');
      else human(obj);
    },
    setExit(code, failure = null) {
      exitCode = code;
      exitFailure = failure;
    },
    exit: () => ({ code: exitCode, failure: exitFailure }),
  };
}

/**
 * Option parser for positive integers; a bad value is bad usage (exit 2).
 * @param {string} name option name for the message
 * @returns {(v: string) => number}
 */
function positiveInt(name) {
  return (v) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n <= 0)
      throw new errors.USAGE(`${name} must be a positive integer`);
    return n;
  };
}

module.exports = { createContext, positiveInt };
