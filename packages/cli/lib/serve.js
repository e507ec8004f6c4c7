'use strict';

/*
 * `mailgate serve`, `mailgate token create` and the serving part of `mailgate demo`.
 * Kept apart from main.js so the API wiring stays in one small file.
 */

/**
 * Runs the HTTP API until SIGTERM/SIGINT (graceful shutdown is in @mailgate/api's server).
 * @param {object} config loadConfig() result
 * @param {import('pino').Logger} log
 * @returns {Promise<{url: string, app: object, close: () => Promise<void>}>}
 */
async function serve(config, log) {
  const { startServer } = require('@mailgate/api');
  const srv = await startServer(config, { log });
  process.stderr.write(
    `mailgate API listening on ${srv.url} (OpenAPI: ${srv.url}/docs); Ctrl-C stops it\n`,
  );
  return srv;
}

/**
 * Creates a bearer token for a user.
 * @param {object} store PgStore
 * @param {string} name
 * @param {{ttlDays?: number}} [opts]
 */
async function createToken(store, name, opts = {}) {
  const user = await store.getUser(name);
  const ttlSeconds = opts.ttlDays ? Math.round(opts.ttlDays * 86400) : undefined;
  const t = await store.createToken(user.id, { ttlSeconds, label: 'cli' });
  return { user: name, token: t.token, expiresAt: t.expiresAt };
}

/**
 * After the demo import: serves the API and prints a token and curl examples. Only when
 * stdout is a terminal (and not --no-serve): in scripts and tests the demo ends by itself.
 * @returns {Promise<boolean>} true when the server runs (the process stays up until Ctrl-C)
 */
async function serveDemo({ config, log, user, noServe }) {
  if (noServe || !process.stdout.isTTY) {
    process.stdout.write(
      '\nThe HTTP API: `npx mailgate serve`, token: `npx mailgate token create ' + user + '`\n',
    );
    return false;
  }
  const srv = await serve(config, log);
  const t = await createToken(srv.app.store, user, { ttlDays: 1 });
  const h = `-H 'Authorization: Bearer ${t.token}'`;
  const api = `${srv.url}/api/v1`;
  process.stdout.write(
    `\nThe HTTP API runs on ${srv.url} (OpenAPI UI: ${srv.url}/docs). Token for ${user}: ${t.token}\n` +
      `  curl -s ${h} ${api}/mailboxes\n` +
      `  curl -s ${h} '${api}/mailboxes/INBOX/messages?limit=5&order=-date'\n` +
      `  curl -s ${h} '${api}/search?q=subject:razor%20from:taint.org'\n` +
      'Ctrl-C stops the server.\n',
  );
  return true;
}

module.exports = { serve, createToken, serveDemo };
