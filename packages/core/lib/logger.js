'use strict';

const pino = require('pino');

/*
 * The process logger (pino). Logs go to stderr so that `--json` output on stdout stays
 * machine-readable. Never log message bodies or secrets: callers pass ids and counts.
 * `format: 'text'` writes one human line per record instead of a JSON object: what the CLI
 * uses for a person (no --json, no LOG_LEVEL; issue 30.10).
 */

const LEVELS = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warning', 50: 'error', 60: 'fatal' };
const BASE_KEYS = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'v']);

/**
 * Creates the process logger.
 * @param {{logLevel?: string, format?: 'json'|'text'}} [config]
 * @returns {import('pino').Logger}
 */
function createLogger(config = {}) {
  const opts = {
    level: config.logLevel || 'info',
    redact: ['password', 'token', 'authorization'],
  };
  if (config.format === 'text') return pino(opts, { write: (line) => writeText(line) });
  return pino(opts, pino.destination(2));
}

/** One record as `mailgate warning: message (key=value, …)` on stderr. */
function writeText(line) {
  let rec;
  try {
    rec = JSON.parse(line);
  } catch {
    process.stderr.write(line);
    return;
  }
  const fields = Object.entries(rec)
    .filter(([k]) => !BASE_KEYS.has(k))
    .map(([k, v]) => `${k}=${typeof v === 'object' && v !== null ? brief(v) : v}`);
  const level = LEVELS[rec.level] || 'log';
  process.stderr.write(
    `mailgate ${level}: ${rec.msg || ''}${fields.length ? ` (${fields.join(', ')})` : ''}\n`,
  );
}

function brief(v) {
  if (v && typeof v.message === 'string') return v.message;
  const s = JSON.stringify(v);
  return s.length > 200 ? `${s.slice(0, 200)}…` : s;
}

module.exports = { createLogger };
