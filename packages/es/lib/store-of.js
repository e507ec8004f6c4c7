'use strict';

const { PgStore } = require('@mailgate/store');

/**
 * The store a mirror operation reads through: the context's, or one over a bare knex (older
 * callers and tests pass the knex). The mirror never writes outbox rows itself.
 * @param {object} x a mirror context ({store}), a PgStore, or a knex
 * @returns {PgStore}
 */
function storeOf(x) {
  if (x && typeof x.drainOutbox === 'function') return x;
  if (x && x.store) return x.store;
  return new PgStore(x, { outbox: false });
}

module.exports = { storeOf };
