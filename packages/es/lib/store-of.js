'use strict';

/**
 * The store a mirror operation reads through (@mailgate/store: all of the mirror's SQL).
 * @param {object} x a mirror context ({store}) or a PgStore
 * @returns {import('@mailgate/store').PgStore}
 */
function storeOf(x) {
  if (x && typeof x.drainOutbox === 'function') return x;
  if (x && x.store && typeof x.store.drainOutbox === 'function') return x.store;
  throw new TypeError('@mailgate/es: pass the PgStore (or a mirror context), not a knex');
}

module.exports = { storeOf };
