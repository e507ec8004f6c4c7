'use strict';

const { Client } = require('pg');

/*
 * One statement at a time per PostgreSQL connection, checked. node-postgres queues a
 * statement written to a client that is still executing another; it prints a deprecation
 * ("Calling client.query() when the client is already executing a query…") only once per
 * process and only from the third, and pg@9 refuses the call. Such a second statement is
 * also a bug of its own: on a connection inside a transaction it runs in another operation's
 * transaction. `guardPgClients()` makes every such statement fail the test it happens in
 * (or the file, when it happens between tests), with the stack of the code that sent it.
 * Owns nothing else: it never changes what a statement does.
 */

const DEPRECATION = /client is already executing a query/;
const INSTALLED = Symbol('mailgate pg-serial guard');

/**
 * Watches every node-postgres client of this test file (knex's pool, raw connections, the
 * probes) from now until the file ends. A statement sent while the client still executes
 * another fails the current test's afterEach (or the file's afterAll) with where it came from.
 * @returns {{take: () => string[]}} take(): the offences seen so far, forgotten (for a test of
 *   the guard itself)
 */
function guardPgClients() {
  // The whole suite installs the guard (jest.config.js setupFilesAfterEnv: pg-serial-all.js);
  // a file that also calls it gets the same watch, so an offence is reported once and take()
  // still hands it to the file's own test of the guard.
  if (Client.prototype[INSTALLED]) return Client.prototype[INSTALLED];
  const seen = [];
  const original = Client.prototype.query;
  Client.prototype.query = function guardedQuery(...args) {
    const state = busy(this);
    if (state) seen.push(state === true ? describe(args[0], new Error('sent').stack) : state);
    return original.apply(this, args);
  };
  // The driver's own notice: a backstop should its private state ever be named differently.
  const onWarning = (w) => {
    if (w && DEPRECATION.test(w.message)) seen.push(`${w.message}\n${w.stack}`);
  };
  process.on('warning', onWarning);
  const check = () => {
    const found = seen.splice(0);
    if (found.length) {
      throw new Error(
        `${found.length} statement(s) sent to a PostgreSQL connection still executing another:\n` +
          found.slice(0, 3).join('\n---\n'),
      );
    }
  };
  afterEach(check);
  afterAll(() => {
    Client.prototype.query = original;
    delete Client.prototype[INSTALLED];
    process.off('warning', onWarning);
    check();
  });
  const handle = { take: () => seen.splice(0) };
  Client.prototype[INSTALLED] = handle;
  return handle;
}

/**
 * True when the client has a statement in flight or waiting (pg's own queue state); a text
 * (reported as an offence) when that state cannot be read, so the guard never passes blind.
 */
function busy(client) {
  // Pipeline mode sends many statements by design; it is not the case watched here.
  if (client.pipeline) return false;
  if (!Array.isArray(client._queryQueue)) {
    return 'pg-serial: node-postgres no longer has _queryQueue; update the guard';
  }
  return Boolean(client._activeQuery) || client._queryQueue.length > 0;
}

function describe(config, stack) {
  const text = typeof config === 'string' ? config : config && config.text;
  const frames = String(stack)
    .split('\n')
    .filter((l) => /\/packages\//.test(l) && !/node_modules|pg-serial\.js/.test(l))
    .slice(0, 6)
    .join('\n');
  return `${String(text || '(not a text statement)')
    .replace(/\s+/g, ' ')
    .slice(0, 200)}\n${frames}`;
}

module.exports = { guardPgClients };
