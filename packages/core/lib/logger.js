'use strict';

const pino = require('pino');

/**
 * Creates the process logger. Logs go to stderr so that `--json` output on stdout stays
 * machine-readable. Never log message bodies or secrets: callers pass ids and counts.
 *
 * @param {{logLevel?: string}} [config]
 * @returns {import('pino').Logger}
 */
function createLogger(config = {}) {
  return pino(
    { level: config.logLevel || 'info', redact: ['password', 'token', 'authorization'] },
    pino.destination(2),
  );
}

module.exports = { createLogger };
